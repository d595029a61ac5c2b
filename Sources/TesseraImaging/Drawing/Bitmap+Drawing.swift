extension Bitmap {
    /// A new bitmap of `size` in `style`, cleared to transparent (black for opaque styles), then drawn by `body`.
    public static func drawing(size: PixelSize, style: PixelStyle = .bgra32,
                               _ body: (DrawingContext) throws -> Void) throws -> Bitmap {
        try Bitmap(width: size.width, height: size.height, style: style) { view in
            view.prepareForDrawing()
            try DrawingContext.draw(into: view, body)
        }
    }
}
