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
    /// How libwebp works on a lossy file (ignored when ``lossless``): its effort and how it spends its
    /// bits. The default, ``Effort/standard``, is libwebp's own.
    public var effort: Effort

    /// libwebp's effort for lossy encoding, 0 (fastest) … 6 (smallest; values outside are clamped):
    /// ``Effort/method`` of ``effort``.
    public var method: Int {
        get { effort.method }
        set { effort.method = newValue }
    }

    /// libwebp's own effort for its simple API, 4: the method of ``Effort/standard``.
    public static let defaultMethod = 4

    /// How libwebp encodes a lossy file: three of its `WebPConfig` fields.
    public struct Effort: Sendable, Hashable {
        /// `method`: 0 (fastest) … 6 (smallest); values outside are clamped.
        public var method: Int
        /// `segments`: 1 … 4 groups of macroblocks, each with its own quantizer and filter strength. With more
        /// than one, libwebp first analyses every macroblock to sort them (values outside are clamped).
        public var segments: Int
        /// `sns_strength`, spatial noise shaping, 0 … 100: how far the segments' quantizers move apart, bits
        /// taken from busy areas for smooth ones (values outside are clamped).
        public var noiseShaping: Int

        /// An effort of `method`, `segments` and `noiseShaping` (libwebp's defaults: 4, 4 and 50).
        public init(method: Int = WebPEncoder.defaultMethod, segments: Int = 4, noiseShaping: Int = 50) {
            self.method = method
            self.segments = segments
            self.noiseShaping = noiseShaping
        }

        /// libwebp's defaults: method 4, four segments, noise shaping 50.
        public static let standard = Effort()

        /// For small images (thumbnails) that must be made fast: method 2, one segment, no noise shaping.
        /// One segment skips libwebp's analysis of the macroblocks (without noise shaping the segments'
        /// quantizers would be equal anyway). On 200×200 photo thumbnails it scores (SSIMULACRA2) at q75 a
        /// little higher than method 2 with four segments and noise shaping 50 at q77, for 2 % more bytes, in
        /// about three quarters of the time (docs/PERFORMANCE.md, "WebP in AVIF's place").
        public static let thumbnail = Effort(method: 2, segments: 1, noiseShaping: 0)
    }

    /// Creates an encoder: lossy at `quality` (default 80) and `method` (default ``defaultMethod``) with the rest
    /// of ``Effort/standard``, or lossless.
    public init(quality: Int = 80, lossless: Bool = false, method: Int = WebPEncoder.defaultMethod) {
        self.init(quality: quality, lossless: lossless, effort: Effort(method: method))
    }

    /// Creates an encoder: lossy at `quality` with `effort`, or lossless.
    public init(quality: Int = 80, lossless: Bool = false, effort: Effort) {
        self.quality = quality
        self.lossless = lossless
        self.effort = effort
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
    /// calls), as lossy WebP at ``quality`` and ``effort``, through libwebp's advanced API (the simple
    /// one fixes the method at 4).
    private func encodeLossy(width: Int32, height: Int32,
                             importPixels: (UnsafeMutablePointer<WebPPicture>) -> Int32) throws(TesseraError) -> [UInt8] {
        var config = WebPConfig()
        guard WebPConfigInit(&config) != 0 else { throw TesseraError(.encoding(format: .webp, message: "libwebp version mismatch")) }
        config.quality = Float(min(max(quality, 0), 100))
        config.method = Int32(min(max(effort.method, 0), 6))
        config.segments = Int32(min(max(effort.segments, 1), 4))
        config.sns_strength = Int32(min(max(effort.noiseShaping, 0), 100))
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
