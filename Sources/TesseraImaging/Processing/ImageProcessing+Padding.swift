extension ImageProcessing {
    /// Space added around the output after the resize and the turn (``ImageProcessing/padding``), in output
    /// pixels, filled with ``ImageProcessing/background``: a 300×200 image with `Padding(10)` becomes
    /// 320×220, with `Padding(top: 0, right: 5, bottom: 10, left: 5)` 310×210 (CSS order: top, right, bottom,
    /// left). The output-pixel limit counts the padded size.
    public struct Padding: Sendable, Hashable, Codable {
        /// Rows above the image.
        public var top: Int
        /// Columns right of it.
        public var right: Int
        /// Rows below it.
        public var bottom: Int
        /// Columns left of it.
        public var left: Int

        /// Each side's padding, in CSS order.
        public init(top: Int, right: Int, bottom: Int, left: Int) {
            self.top = top
            self.right = right
            self.bottom = bottom
            self.left = left
        }

        /// The same padding on all four sides.
        public init(_ all: Int) { self.init(top: all, right: all, bottom: all, left: all) }

        /// The four sides in CSS order (top, right, bottom, left).
        var sides: [Int] { [top, right, bottom, left] }

        /// `T,R,B,L`: the identity's part.
        var identity: String { sides.map(String.init).joined(separator: ",") }

        /// `size` with the padding around it.
        public func padded(_ size: PixelSize) -> PixelSize {
            PixelSize(width: size.width + left + right, height: size.height + top + bottom)
        }
    }
}
