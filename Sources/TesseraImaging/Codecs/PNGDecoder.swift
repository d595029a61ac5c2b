import CPNG

/// Decodes PNG with libpng's simplified API (`png_image_*`), which handles palette, grayscale,
/// 16-bit, interlaced and tRNS images and never longjmps through Swift frames.
///
/// - Direct styles: ``PixelStyle/bgra32`` (read as straight BGRA, then premultiplied here),
///   ``PixelStyle/bgr32`` (the same, then alpha set to 255: composited over black, exactly what
///   converting premultiplied BGRA to BGR32 does) and ``PixelStyle/gray8`` (`PNG_FORMAT_GRAY` for
///   grayscale files without alpha; otherwise through premultiplied BGRA and ``PixelConversion``,
///   so the luma is the same Rec. 601 formula, over black, as everywhere else).
/// - 16-bit files without gAMA/sRGB chunks are taken as sRGB-encoded (`PNG_IMAGE_FLAG_16BIT_sRGB`),
///   as browsers do, not as linear light (libpng's default).
/// - No cheap scaling: ``decodedSize(for:atLeast:)`` is always the full size.
/// - Errors: libpng messages about running out of data throw ``DecodingFailure/truncated(_:)``;
///   every other libpng error throws ``DecodingFailure/codec(_:message:)`` with libpng's message.
public struct PNGDecoder: ImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``ImageFileFormat/png``.
    public var format: ImageFileFormat { .png }

    /// Reads the header (IHDR and, for tRNS, the chunks before IDAT).
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        var image = png_image()
        defer { png_image_free(&image) }
        try begin(&image, data)
        return ImageInfo(format: .png, width: Int(image.width), height: Int(image.height),
                         hasAlpha: image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0,
                         isGrayscale: image.format & UInt32(PNG_FORMAT_FLAG_COLOR) == 0)
    }

    /// Always the full stored size: PNG has no cheap scaled decode.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { info.storedSize }

    /// ``PixelStyle/bgra32``, ``PixelStyle/bgr32`` and ``PixelStyle/gray8``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style != .bgr565 }

    /// Decodes the whole image into `target`, which must have the stored size.
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) {
        var image = png_image()
        defer { png_image_free(&image) }
        try begin(&image, data)
        let layout = target.layout
        guard supportsDirectDecode(to: layout.style), layout.width == Int(image.width), layout.height == Int(image.height),
              layout.bytesPerRow <= Int(Int32.max)
        else { throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow)) }

        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let sourceIsPlainGray = image.format & UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA) == 0
        if layout.style == .gray8 && !sourceIsPlainGray {
            // libpng would compute luma in linear light; go through premultiplied BGRA instead so
            // that gray8 is the same Rec. 601 luma (over black) as every other path in Tessera.
            let bgra = BitmapLayout(width: layout.width, height: layout.height, style: .bgra32)
            let temp = UnsafeMutableRawPointer.allocate(byteCount: bgra.byteCount, alignment: PixelStyle.rowAlignment)
            defer { temp.deallocate() }
            let view = MutableBitmapView(layout: bgra, baseAddress: temp)
            try finish(&image, into: view, format: UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_BGR | PNG_FORMAT_FLAG_ALPHA))
            PixelConversion.premultiplyBGRA(view)
            try PixelConversion.convert(source: UnsafeRawPointer(temp), layout: bgra, to: target)
            return
        }
        let isGray = layout.style == .gray8
        try finish(&image, into: target,
                   format: isGray ? UInt32(PNG_FORMAT_GRAY) : UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_BGR | PNG_FORMAT_FLAG_ALPHA))
        if layout.style == .bgra32 {
            PixelConversion.premultiplyBGRA(target)
        } else if layout.style == .bgr32 {
            for y in 0..<layout.height {
                let row = target.row(y).assumingMemoryBound(to: UInt8.self)
                PixelConversion.premultiplyRow(row, width: layout.width)
                for x in 0..<layout.width { row[x &* 4 &+ 3] = 255 }
            }
        }
    }

    /// Reads the pixels as 8-bit `format` into `target` (whose stride must fit an `Int32`).
    private func finish(_ image: inout png_image, into target: MutableBitmapView, format: UInt32) throws(TesseraError) {
        image.format = format
        var black = png_color(red: 0, green: 0, blue: 0)
        // The row stride is in components, which are bytes for 8-bit formats. The background is
        // used only if alpha had to be removed, which the callers avoid.
        let ok = png_image_finish_read(&image, &black, target.baseAddress, Int32(target.layout.bytesPerRow), nil)
        guard ok != 0 else { throw failure(image) }
    }

    /// Starts reading and checks the declared size against the limits.
    private func begin(_ image: inout png_image, _ data: UnsafeRawBufferPointer) throws(TesseraError) {
        try limits.checkInput(byteCount: data.count)
        guard let base = data.baseAddress else { throw TesseraError(.decoding(.empty)) }
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_memory(&image, base, data.count) != 0 else { throw failure(image) }
        try limits.checkDimensions(width: Int(image.width), height: Int(image.height))
    }

    /// The typed error for libpng's message in `image`.
    private func failure(_ image: png_image) -> TesseraError {
        var copy = image
        let message = withUnsafeBytes(of: &copy.message) { raw -> String in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        let lower = message.lowercased()
        let truncationHints = ["not enough image data", "read beyond end of data", "read error", "unexpected end",
                               "truncated", "missing idat", "no image in file", "end of file"]
        if truncationHints.contains(where: { lower.contains($0) }) {
            return TesseraError(.decoding(.truncated(.png)))
        }
        return TesseraError(.decoding(.codec(.png, message: message.isEmpty ? "unknown libpng error" : message)))
    }
}
