import CWebP
import Tessera

/// Encodes opaque BGRA bitmaps as lossy (or lossless) WebP with libwebp's simple API, for the
/// format study. (Premultiplied and straight alpha are the same for the opaque test images.)
struct WebPFileEncoder {
    /// Quality 0…100 for lossy encoding.
    var quality: Float = 80
    /// Lossless instead of lossy.
    var lossless = false

    func encode(_ image: some BitmapImage) throws -> [UInt8] {
        precondition(image.style == .bgra32 || image.style == .bgr32, "WebP study images are 32-bit")
        return try image.withUnsafeBytes { bytes in
            var output: UnsafeMutablePointer<UInt8>? = nil
            let base = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let w = Int32(image.width), h = Int32(image.height), stride = Int32(image.bytesPerRow)
            let size = lossless ? WebPEncodeLosslessBGRA(base, w, h, stride, &output)
                                : WebPEncodeBGRA(base, w, h, stride, quality, &output)
            defer { if let output { WebPFree(output) } }
            guard size > 0, let output else { throw TesseraError(.encoding(format: .webp, message: "WebPEncodeBGRA failed")) }
            return Array(UnsafeBufferPointer(start: output, count: size))
        }
    }
}
