extension Bitmap {
    /// A new bitmap of `size` in `style`, cleared to transparent (black for opaque styles), then drawn by `body`.
    public static func drawing(size: PixelSize, style: PixelStyle = .bgra32,
                               _ body: (DrawingContext) throws -> Void) throws -> Bitmap {
        try Bitmap(width: size.width, height: size.height, style: style) { view in
            if style == .bgr32 {
                // cairo's RGB24 ignores the fourth byte; Tessera keeps it at 255 (opaque).
                view.bytes.withMemoryRebound(to: UInt32.self) { $0.update(repeating: 0xFF00_0000) }
            }
            try DrawingContext.draw(into: view, body)
        }
    }
}
