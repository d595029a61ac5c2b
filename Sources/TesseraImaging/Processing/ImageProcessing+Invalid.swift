extension ImageProcessing {
    /// Why an ``ImageProcessing`` (or a size it was applied to) was refused: the parameter at fault and why.
    public struct Invalid: Error, Sendable, Hashable, CustomStringConvertible {
        /// The parameter at fault; ``Parameter/source`` for a source size out of range, ``Parameter/output``
        /// for a canvas beyond ``Limits/maximumOutputPixels``.
        public var parameter: Parameter
        /// A sentence for people, naming the allowed range.
        public var message: String

        /// Creates an error.
        public init(parameter: Parameter, message: String) {
            self.parameter = parameter
            self.message = message
        }

        /// `"parameter: message"`.
        public var description: String { "\(parameter): \(message)" }
    }
}
