extension ImageProcessing {
    /// The bounds ``ImageProcessing/validate(_:)`` and ``ImageProcessing/geometry(for:limits:)`` hold a value to.
    public struct Limits: Sendable, Hashable {
        /// The largest ``ImageProcessing/width`` and ``ImageProcessing/height`` (before ``ImageProcessing/dpr``); 8192.
        public var maximumDimension: Int
        /// The largest ``ImageProcessing/dpr``; 4 (the smallest is always 1).
        public var maximumDPR: Double
        /// The largest ``ImageProcessing/blur`` sigma; 100.
        public var maximumBlur: Double
        /// The most pixels an output canvas may have (after ``ImageProcessing/dpr``); 4,000,000 by default,
        /// as `tessera serve`'s default.
        public var maximumOutputPixels: Int

        /// Creates limits; the defaults are the ones documented on each property.
        public init(maximumDimension: Int = 8192, maximumDPR: Double = 4, maximumBlur: Double = 100,
                    maximumOutputPixels: Int = 4_000_000) {
            self.maximumDimension = maximumDimension
            self.maximumDPR = maximumDPR
            self.maximumBlur = maximumBlur
            self.maximumOutputPixels = maximumOutputPixels
        }
    }

    /// Why an ``ImageProcessing`` (or a size it was applied to) was refused: the parameter at fault and why.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// The property at fault: `width`, `height`, `dpr`, `gravity`, `quality`, `blur`; `source` for a
        /// source size that is not positive, `output` for a canvas beyond ``Limits/maximumOutputPixels``.
        public var parameter: String
        /// A sentence for people, naming the allowed range.
        public var message: String

        /// Creates an error.
        public init(parameter: String, message: String) {
            self.parameter = parameter
            self.message = message
        }

        /// `"parameter: message"`.
        public var description: String { "\(parameter): \(message)" }
    }

    /// Checks every field against `limits`: ``width`` and ``height`` 1…``Limits/maximumDimension`` when
    /// given, ``dpr`` 1…``Limits/maximumDPR``, a focal point's fractions 0…1, ``quality`` 1…100, ``blur``
    /// 0…``Limits/maximumBlur``. NaN is outside every range (and limits below the lower bounds refuse everything rather than trap). Throws for the first field that fails, in that order.
    public func validate(_ limits: Limits = Limits()) throws(Invalid) {
        for (name, side) in [("width", width), ("height", height)] {
            if let side, !(side >= 1 && side <= limits.maximumDimension) {
                throw Invalid(parameter: name, message: "\(side) is not a whole number from 1 to \(limits.maximumDimension)")
            }
        }
        guard dpr >= 1 && dpr <= limits.maximumDPR else {
            throw Invalid(parameter: "dpr", message: "\(dpr) is not from 1 to \(limits.maximumDPR)")
        }
        if case .focalPoint(let x, let y) = gravity, !(0...1).contains(x) || !(0...1).contains(y) {
            throw Invalid(parameter: "gravity", message: "focal point \(x), \(y) is not inside 0…1 on both axes")
        }
        if let quality, !(1...100).contains(quality) {
            throw Invalid(parameter: "quality", message: "\(quality) is not a whole number from 1 to 100")
        }
        if let blur, !(blur >= 0 && blur <= limits.maximumBlur) {
            throw Invalid(parameter: "blur", message: "\(blur) is not from 0 to \(limits.maximumBlur)")
        }
    }
}
