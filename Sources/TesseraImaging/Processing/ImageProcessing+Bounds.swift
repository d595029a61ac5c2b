extension ImageProcessing {
    /// The smallest and largest value a parameter may take, both allowed: the one declaration of a range
    /// that validation, parsers and messages read. Unlike `ClosedRange` it never traps: bounds with
    /// ``upper`` below ``lower`` contain nothing, and NaN is in no bounds.
    public struct Bounds<Value: Comparable & Sendable & Hashable>: Sendable, Hashable, CustomStringConvertible {
        /// The smallest value allowed.
        public var lower: Value
        /// The largest value allowed.
        public var upper: Value

        /// Bounds from `lower` to `upper`, both allowed.
        public init(_ lower: Value, _ upper: Value) {
            self.lower = lower
            self.upper = upper
        }

        /// Whether `value` is from ``lower`` to ``upper``.
        public func contains(_ value: Value) -> Bool { value >= lower && value <= upper }

        /// `"1 to 8192"`; whole doubles without a fraction (`"1 to 4"`).
        public var description: String { "\(Self.text(lower)) to \(Self.text(upper))" }

        private static func text(_ value: Value) -> String {
            if let double = value as? Double, double.rounded() == double, abs(double) < 1e15 { return String(Int(double)) }
            return "\(value)"
        }
    }
}
