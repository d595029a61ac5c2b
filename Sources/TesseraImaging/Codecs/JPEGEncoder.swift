import CTurboJPEG

/// Encodes JPEG with TurboJPEG (`tjCompress2`), 4:2:0 chroma subsampling for colour, one
/// component for ``PixelStyle/gray8``.
///
/// JPEG has no alpha: ``PixelStyle/bgra32`` pixels are encoded from their premultiplied colour,
/// which is the image composited over black. ``PixelStyle/bgr565`` is expanded to 8 bits first.
public struct JPEGEncoder: ImageEncoding {
    /// Quality 1…100 (values outside are clamped).
    public var quality: Int

    /// Creates an encoder with `quality` (1…100, default 85).
    public init(quality: Int = 85) { self.quality = quality }

    /// ``/TesseraCore/ImageFileFormat/jpeg``.
    public var format: ImageFileFormat { .jpeg }

    /// Encodes `image` as baseline JPEG.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        let layout = image.layout
        return try image.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(TesseraError) -> [UInt8] in
            guard let source = bytes.baseAddress, layout.width > 0, layout.height > 0,
                  layout.width <= Int(Int32.max), layout.height <= Int(Int32.max), layout.bytesPerRow <= Int(Int32.max)
            else { throw TesseraError(.encoding(format: .jpeg, message: "unsupported bitmap \(layout)")) }
            switch layout.style {
            case .bgra32, .bgr32:
                return try compress(source, layout.width, layout.bytesPerRow, layout.height, TJPF_BGRX, TJSAMP_420)
            case .gray8:
                return try compress(source, layout.width, layout.bytesPerRow, layout.height, TJPF_GRAY, TJSAMP_GRAY)
            case .bgr565:
                let pitch = layout.width * 4
                let expanded = UnsafeMutableRawPointer.allocate(byteCount: pitch * layout.height, alignment: 64)
                defer { expanded.deallocate() }
                for y in 0..<layout.height {
                    PixelConversion.toBGRA(source + y * layout.bytesPerRow, style: .bgr565, to: expanded + y * pitch, width: layout.width)
                }
                return try compress(UnsafeRawPointer(expanded), layout.width, pitch, layout.height, TJPF_BGRX, TJSAMP_420)
            }
        }
    }

    private func compress(_ pixels: UnsafeRawPointer, _ width: Int, _ pitch: Int, _ height: Int,
                          _ pixelFormat: TJPF, _ subsampling: TJSAMP) throws(TesseraError) -> [UInt8] {
        guard let handle = tjInitCompress() else {
            throw TesseraError(.encoding(format: .jpeg, message: "cannot create a TurboJPEG handle"))
        }
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        defer { if let output { tjFree(output) } }
        let result = tjCompress2(handle, pixels.assumingMemoryBound(to: UInt8.self), Int32(width), Int32(pitch), Int32(height),
                                 pixelFormat.rawValue, &output, &size, Int32(subsampling.rawValue),
                                 Int32(min(100, max(1, quality))), 0)
        guard result == 0, let output else {
            let message = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "tjCompress2 failed"
            throw TesseraError(.encoding(format: .jpeg, message: message))
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
