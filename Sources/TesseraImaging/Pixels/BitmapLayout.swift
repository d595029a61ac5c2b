/// Where the pixels of a bitmap are in memory: size, style and row stride.
public struct BitmapLayout: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// Pixel style.
    public let style: PixelStyle
    /// Bytes from the start of one row to the start of the next.
    public let bytesPerRow: Int

    /// A layout with Tessera's aligned row stride (see ``PixelStyle/rowAlignment``).
    public init(width: Int, height: Int, style: PixelStyle) {
        self.width = width
        self.height = height
        self.style = style
        self.bytesPerRow = style.bytesPerRow(forWidth: width)
    }

    /// A layout with an explicit row stride, for memory owned by someone else.
    /// - Throws: ``/TesseraCore/TesseraError`` with reason `.invalidLayout` if a dimension is not positive or the
    ///   stride is shorter than a row of pixels or not a multiple of 4 (cairo's requirement).
    public init(width: Int, height: Int, style: PixelStyle, bytesPerRow: Int) throws(TesseraError) {
        guard width > 0, height > 0, width <= 1 << 20, height <= 1 << 20,
              bytesPerRow >= width * style.bytesPerPixel, bytesPerRow % 4 == 0
        else {
            throw TesseraError(.invalidLayout(width: width, height: height, bytesPerRow: bytesPerRow))
        }
        self.width = width
        self.height = height
        self.style = style
        self.bytesPerRow = bytesPerRow
    }

    /// The size in pixels.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// Bytes the pixels occupy: `bytesPerRow × height`.
    public var byteCount: Int { bytesPerRow * height }

    /// `"WxH style (N bytes/row)"`.
    public var description: String { "\(width)x\(height) \(style) (\(bytesPerRow) bytes/row)" }
}
