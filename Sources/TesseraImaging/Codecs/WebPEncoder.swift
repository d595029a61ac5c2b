import CWebP

/// Encodes WebP with libwebp, lossy (VP8, with a quality and an effort) or lossless (VP8L).
///
/// WebP stores straight alpha, so ``PixelStyle/bgra32`` pixels with transparency are un-premultiplied
/// into a packed BGRA copy first (`copyPixels(as:)`), and so are the two- and one-byte styles (expanded
/// to alpha 255). Opaque four-byte pixels are read in place by the lossy encoder. The copy costs
/// `width × height × 4` bytes, small next to the encoder's own buffers.
public struct WebPEncoder: ImageEncoding {
    /// Quality 0…100 for lossy encoding (values outside are clamped); ignored when ``lossless``.
    public var quality: Int
    /// Lossless (VP8L) instead of lossy (VP8).
    public var lossless: Bool
    /// libwebp's effort for lossy encoding, 0 (fastest) … 6 (smallest; values outside are clamped). The
    /// default 4 is what libwebp's simple API uses. On 200×200 photo thumbnails at quality 80, 2 takes about
    /// half the time of 4 for 3 % more bytes (docs/PERFORMANCE.md, "WebP in AVIF's place").
    public var method: Int

    /// libwebp's own effort for its simple API, 4: the default ``method``.
    public static let defaultMethod = 4

    /// Creates an encoder: lossy at `quality` (default 80) and `method` (default ``defaultMethod``), or lossless.
    public init(quality: Int = 80, lossless: Bool = false, method: Int = WebPEncoder.defaultMethod) {
        self.quality = quality
        self.lossless = lossless
        self.method = method
    }

    /// ``/TesseraCore/ImageFileFormat/webp``.
    public var format: ImageFileFormat { .webp }

    /// Encodes `image` as a WebP file.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        // libwebp takes Int32 dimensions and refuses anything over 16383 on a side.
        guard image.width > 0, image.height > 0, image.width <= 16_383, image.height <= 16_383 else {
            throw TesseraError(.encoding(format: .webp, message: "WebP holds 1…16383 pixels per side, not \(image.width)×\(image.height)"))
        }
        let width = Int32(image.width), height = Int32(image.height)
        // Opaque four-byte pixels are straight BGRA already (premultiplying by 255 changes nothing):
        // the lossy encoder reads them in place, skipping the alpha byte.
        if !lossless, image.style == .bgr32 || (image.style == .bgra32 && !image.hasTransparentPixels) {
            return try image.withUnsafeBytes { bytes throws(TesseraError) in
                try encodeLossy(width: width, height: height) { WebPPictureImportBGRX($0, bytes.baseAddress, Int32(image.bytesPerRow)) }
            }
        }
        let pixels = image.copyPixels(as: ExportedPixelFormat(order: .bgra, premultiplied: false))
        let stride = Int32(image.width * 4)
        if !lossless {
            return try pixels.withUnsafeBufferPointer { buffer throws(TesseraError) in
                try encodeLossy(width: width, height: height) { WebPPictureImportBGRA($0, buffer.baseAddress, stride) }
            }
        }
        var output: UnsafeMutablePointer<UInt8>? = nil
        let size = pixels.withUnsafeBufferPointer { WebPEncodeLosslessBGRA($0.baseAddress, width, height, stride, &output) }
        defer { if let output { WebPFree(output) } }
        guard size > 0, let output else {
            throw TesseraError(.encoding(format: .webp, message: "WebPEncodeLosslessBGRA failed"))
        }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    /// A picture of `width` × `height` filled by `importPixels` (one of libwebp's `WebPPictureImport…`
    /// calls), as lossy WebP at ``quality`` and ``method``, through libwebp's advanced API (the simple
    /// one fixes the method at 4).
    private func encodeLossy(width: Int32, height: Int32,
                             importPixels: (UnsafeMutablePointer<WebPPicture>) -> Int32) throws(TesseraError) -> [UInt8] {
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw TesseraError(.encoding(format: .webp, message: "libwebp version mismatch")) }
        config.quality = Float(min(max(quality, 0), 100))
        config.method = Int32(min(max(method, 0), 6))
        var picture = WebPPicture()
        guard WebPPictureInit(&picture) != 0 else { throw TesseraError(.encoding(format: .webp, message: "libwebp version mismatch")) }
        defer { WebPPictureFree(&picture) }
        picture.width = width
        picture.height = height
        var writer = WebPMemoryWriter()
        WebPMemoryWriterInit(&writer)
        defer { WebPMemoryWriterClear(&writer) }
        let encoded = withUnsafeMutablePointer(to: &writer) { sink -> Bool in
            picture.writer = WebPMemoryWrite
            picture.custom_ptr = UnsafeMutableRawPointer(sink)
            return importPixels(&picture) != 0 && WebPEncode(&config, &picture) != 0
        }
        guard encoded, writer.size > 0, let memory = writer.mem else {
            throw TesseraError(.encoding(format: .webp, message: "WebPEncode failed (error \(picture.error_code.rawValue))"))
        }
        return Array(UnsafeBufferPointer(start: memory, count: writer.size))
    }
}
