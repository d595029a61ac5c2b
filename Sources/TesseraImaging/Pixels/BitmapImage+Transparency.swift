extension BitmapImage {
    /// Whether any pixel is not fully opaque. Only ``PixelStyle/bgra32`` can say so (the other styles are
    /// opaque by construction); a `bgra32` image is scanned until its first such pixel.
    public var hasTransparentPixels: Bool {
        guard style == .bgra32 else { return false }
        return withUnsafeBytes { bytes in
            for y in 0..<height {
                let row = y * bytesPerRow
                var x = 3
                while x < width * 4 {
                    if bytes[row + x] != 255 { return true }
                    x += 4
                }
            }
            return false
        }
    }
}
