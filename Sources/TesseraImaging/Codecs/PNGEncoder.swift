import CPNG

/// Encodes PNG with libpng's simplified write API.
///
/// - ``PixelStyle/bgra32``: un-premultiplied into straight BGRA (PNG stores straight alpha), 8-bit RGBA.
/// - ``PixelStyle/bgr32`` and ``PixelStyle/bgr565``: 8-bit RGB (565 expanded by bit replication).
/// - ``PixelStyle/gray8``: 8-bit grayscale, written straight from the bitmap.
public struct PNGEncoder: ImageEncoding {
    /// Creates an encoder.
    public init() {}

    /// ``/TesseraCore/ImageFileFormat/png``.
    public var format: ImageFileFormat { .png }

    /// Encodes `image` as PNG.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        let layout = image.layout
        return try image.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(TesseraError) -> [UInt8] in
            guard let source = bytes.baseAddress, layout.width > 0, layout.height > 0 else {
                throw TesseraError(.encoding(format: .png, message: "empty bitmap \(layout)"))
            }
            let width = layout.width, height = layout.height
            if layout.style == .gray8 {
                return try write(UInt32(PNG_FORMAT_GRAY), width: width, height: height, pixels: source, stride: layout.bytesPerRow)
            }
            let hasAlpha = layout.style == .bgra32
            let channels = hasAlpha ? 4 : 3
            let stride = width * channels
            let packed = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * height)
            defer { packed.deallocate() }
            let rowBGRA = UnsafeMutablePointer<UInt8>.allocate(capacity: width * 4)
            defer { rowBGRA.deallocate() }
            for y in 0..<height {
                let src = source + y * layout.bytesPerRow
                let dst = packed + y * stride
                if hasAlpha {
                    PixelConversion.unpremultiplyRow(src.assumingMemoryBound(to: UInt8.self), to: dst, width: width)
                } else {
                    PixelConversion.toBGRA(src, style: layout.style, to: UnsafeMutableRawPointer(rowBGRA), width: width)
                    for x in 0..<width {
                        dst[x &* 3] = rowBGRA[x &* 4]
                        dst[x &* 3 &+ 1] = rowBGRA[x &* 4 &+ 1]
                        dst[x &* 3 &+ 2] = rowBGRA[x &* 4 &+ 2]
                    }
                }
            }
            let format = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_BGR) | (hasAlpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0)
            return try write(format, width: width, height: height, pixels: UnsafeRawPointer(packed), stride: stride)
        }
    }

    /// Compresses 8-bit pixels of `format` into a PNG file, growing the output buffer if needed.
    private func write(_ format: UInt32, width: Int, height: Int, pixels: UnsafeRawPointer, stride: Int) throws(TesseraError) -> [UInt8] {
        guard width <= Int(UInt32.max), height <= Int(UInt32.max), stride <= Int(Int32.max) else {
            throw TesseraError(.encoding(format: .png, message: "bitmap too large for PNG"))
        }
        var capacity = stride * height / 2 + 1024
        for _ in 0..<2 {
            var image = png_image()
            image.version = UInt32(PNG_IMAGE_VERSION)
            image.width = UInt32(width)
            image.height = UInt32(height)
            image.format = format
            var output = [UInt8](repeating: 0, count: capacity)
            var size = capacity
            let ok = output.withUnsafeMutableBytes { out in
                png_image_write_to_memory(&image, out.baseAddress, &size, 0, pixels, Int32(stride), nil)
            }
            png_image_free(&image)
            if ok != 0 {
                output.removeSubrange(size...)
                return output
            }
            guard size > capacity else {
                var copy = image
                let message = withUnsafeBytes(of: &copy.message) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                throw TesseraError(.encoding(format: .png, message: message.isEmpty ? "libpng write failed" : message))
            }
            capacity = size
        }
        throw TesseraError(.encoding(format: .png, message: "libpng kept asking for a bigger buffer"))
    }
}
