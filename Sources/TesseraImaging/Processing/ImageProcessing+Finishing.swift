extension ImageProcessing {
    /// Whether any effect (``sharpen``, ``pixelate``, ``grayscale``, ``roundCorners``) is asked for.
    var hasEffects: Bool { (sharpen ?? 0) > 0 || (pixelate ?? 1) > 1 || grayscale || roundCorners != nil }

    /// Steps 8 to 10 of ``ImageDecoder/render(_:processing:limits:)``: `image` (premultiplied
    /// ``PixelStyle/bgra32``, turned) placed at (left, top) of a canvas of ``Padding/padded(_:)`` its size,
    /// the rest ``background`` (premultiplied: each colour channel times alpha ÷ 255, rounded), then the
    /// effects on the whole canvas, then `watermark` at ``Watermark/placements(of:on:)``. A new bitmap with
    /// `image`'s integrity.
    func finished(_ image: Bitmap, watermark: Bitmap? = nil) throws(TesseraError) -> Bitmap {
        let pad = padding ?? Padding(0)
        let size = pad.padded(image.layout.size)
        let bytesPerRow = image.layout.bytesPerRow, rowBytes = image.width * 4
        var result = try image.withUnsafeBytes { (pixels) throws(TesseraError) in
            try Bitmap(width: size.width, height: size.height, style: .bgra32) { (view) throws(TesseraError) in
                if size != image.layout.size {
                    let fill = background.premultipliedBGRA
                    for y in 0..<size.height {
                        let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                        for x in 0..<size.width { for c in 0..<4 { row[x * 4 + c] = fill[c] } }
                    }
                }
                for y in 0..<image.height {
                    (view.row(y + pad.top) + pad.left * 4).copyMemory(from: pixels.baseAddress! + y * bytesPerRow, byteCount: rowBytes)
                }
                if let sigma = sharpen, sigma > 0 { Effects.sharpen(view, sigma: sigma) }
                if let side = pixelate, side > 1 { Effects.pixelate(view, size: side) }
                if grayscale { Effects.grayscale(view) }
                if let roundCorners { Effects.roundCorners(view, roundCorners) }
                if let mark = self.watermark, let watermark {
                    let context = try DrawingContext(target: view)
                    for rect in mark.placements(of: watermark.layout.size, on: size) {
                        try context.draw(watermark, in: rect, mode: .stretch, alpha: mark.opacity)
                    }
                    context.flush()
                }
            }
        }
        result.integrity = image.integrity
        return result
    }
}

extension ImageProcessing.Background {
    /// The colour as one premultiplied ``PixelStyle/bgra32`` pixel: blue, green, red (each times alpha ÷ 255,
    /// rounded half up), alpha.
    var premultipliedBGRA: [UInt8] {
        let a = Int(alpha)
        return [blue, green, red].map { UInt8((Int($0) * a + 127) / 255) } + [alpha]
    }
}
