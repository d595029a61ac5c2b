import CWebP

/// Encodes WebP with libwebp's simple API, lossy (VP8, with a quality) or lossless (VP8L).
///
/// WebP stores straight alpha, so ``PixelStyle/bgra32`` pixels are un-premultiplied into a packed
/// BGRA copy first (`copyPixels(as:)`); opaque styles are expanded to BGRA with alpha 255. The copy
/// costs `width × height × 4` bytes, small next to the encoder's own buffers.
public struct WebPEncoder: ImageEncoding {
    /// Quality 0…100 for lossy encoding (values outside are clamped); ignored when ``lossless``.
    public var quality: Int
    /// Lossless (VP8L) instead of lossy (VP8).
    public var lossless: Bool

    /// Creates an encoder: lossy at `quality` (default 80), or lossless.
    public init(quality: Int = 80, lossless: Bool = false) {
        self.quality = quality
        self.lossless = lossless
    }

    /// ``/TesseraCore/ImageFileFormat/webp``.
    public var format: ImageFileFormat { .webp }

    /// Encodes `image` as a WebP file.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        // libwebp takes Int32 dimensions and refuses anything over 16383 on a side.
        guard image.width > 0, image.height > 0, image.width <= 16_383, image.height <= 16_383 else {
            throw TesseraError(.encoding(format: .webp, message: "WebP holds 1…16383 pixels per side, not \(image.width)×\(image.height)"))
        }
        let pixels = image.copyPixels(as: ExportedPixelFormat(order: .bgra, premultiplied: false))
        let width = Int32(image.width), height = Int32(image.height), stride = Int32(image.width * 4)
        var output: UnsafeMutablePointer<UInt8>? = nil
        let size = pixels.withUnsafeBufferPointer { buffer in
            lossless ? WebPEncodeLosslessBGRA(buffer.baseAddress, width, height, stride, &output)
                     : WebPEncodeBGRA(buffer.baseAddress, width, height, stride, Float(min(max(quality, 0), 100)), &output)
        }
        defer { if let output { WebPFree(output) } }
        guard size > 0, let output else {
            throw TesseraError(.encoding(format: .webp, message: lossless ? "WebPEncodeLosslessBGRA failed" : "WebPEncodeBGRA failed"))
        }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
