extension Bitmap {
    /// This image composited over `background` (premultiplied source-over, in 8-bit integers rounded to
    /// nearest): each channel becomes `c + b·(255 − a)/255`, where `c` and `a` are the pixel's
    /// premultiplied colour and alpha and `b` the background's premultiplied channel. With an opaque
    /// background the result is opaque: what a format without transparency (JPEG) should encode. Styles
    /// without alpha are returned as they are. Keeps ``integrity``.
    public func flattened(onto background: ImageProcessing.Background) -> Bitmap {
        guard style == .bgra32 else { return self }
        var result = Bitmap(flattening: self, onto: background)
        result.integrity = integrity
        return result
    }

    /// `image` composited over `background`, as ``flattened(onto:)`` does, into a new bitmap of its size
    /// (an image in a table slot, say). `image` must be ``PixelStyle/bgra32``.
    public init(flattening image: some BitmapImage, onto background: ImageProcessing.Background) {
        precondition(image.style == .bgra32, "only bgra32 has alpha to flatten")
        func times(_ value: Int, _ factor: Int) -> Int { (value * factor + 127) / 255 }
        let ba = Int(background.alpha)
        // The background premultiplied, in memory order B, G, R, A.
        let under = [times(Int(background.blue), ba), times(Int(background.green), ba), times(Int(background.red), ba), ba]
        let width = image.width, height = image.height, bytesPerRow = image.bytesPerRow
        self.init(layout: BitmapLayout(width: width, height: height, style: .bgra32)) { (view: MutableBitmapView) in
            image.withUnsafeBytes { bytes in
                for y in 0..<height {
                    let source = y * bytesPerRow
                    let target = view.row(y).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width {
                        let p = source + x * 4
                        let uncovered = 255 - Int(bytes[p + 3])
                        for c in 0..<4 { target[x * 4 + c] = UInt8(min(255, Int(bytes[p + c]) + times(under[c], uncovered))) }
                    }
                }
            }
        }
    }
}
