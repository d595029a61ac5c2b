import CPNG
import CTesseraCodecs

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
/// - Cheap scaling by an integer factor k: ``decodedSize(for:atLeast:)`` is ⌈width / k⌉ × ⌈height / k⌉
///   for the largest k that keeps at least twice the target (so that the resampling after it still
///   averages two or more pixels per output pixel, and thumbnails stay as sharp as when resampled
///   from the full size), and each decoded pixel is the mean of a k × k
///   block of premultiplied pixels (a box filter; the last row and column of blocks may be partial).
/// - Fast path (`tessera_png.c`) for 8-bit gray, gray+alpha, RGB, RGBA and palette files, not
///   interlaced, without a gamma other than sRGB's: libdeflate inflates the image data in one call
///   and each row is unfiltered, premultiplied and box-reduced on the fly, with the same pixels as
///   libpng's. Every other file, and any file the fast path finds damaged, goes through libpng's
///   simplified API (then box-reduced), so errors and messages stay libpng's.
/// - Colour (docs/COLOUR.md): an `iCCP` profile of a colour file converts the decoded (box-reduced)
///   pixels to sRGB with `ColourConversion`; a usable one also overrides `gAMA`/`cHRM`, as the
///   PNG specification orders, so those chunks are cut from a copy before libpng reads it. Without
///   a usable profile, `sRGB` changes nothing and `gAMA` is applied by libpng (the fast path declines
///   any gamma but sRGB's, so both paths give libpng's pixels), as browsers do; `cHRM` alone changes
///   nothing.
/// - Truncated files (libpng runs out of data): under ``DecodingPolicy/strict`` they throw
///   ``/TesseraCore/DecodingFailure/truncated(_:)``. Under ``DecodingPolicy/lenient`` libpng's progressive reader (the
///   reader Chromium's incremental decoder uses) collects the rows that arrived, a complete copy of the
///   file with zero samples for the other rows decodes through the paths above (the rows that arrived
///   are exactly those of the whole file), and the rest is filled: ``DecodeIntegrity/fillGray``
///   (opaque) for an image without alpha, transparent for one with an alpha channel or tRNS. "Arrived"
///   means: for a plain file, every row the reader delivered; for an Adam7 file, every row once the
///   first pass is complete, otherwise the 8 rows each received first-pass row stands for. A missing
///   Adam7 pixel shows the pixel of the latest received pass that stands for it (the 8×8 … 1×2 blocks of
///   libpng's progressive display, as Chromium draws a partial interlaced PNG). The decode returns
///   ``DecodeIntegrity/truncated``; fewer arrived rows than ``DecodingLimits/minimumDecodedFraction``
///   of the height throw ``/TesseraCore/DecodingFailure/truncated(_:)``. A file whose rows are all there but that
///   lacks IEND (or whose last chunk is cut) also counts as truncated: ``DecodeIntegrity/truncated``
///   under lenient, ``/TesseraCore/DecodingFailure/truncated(_:)`` under strict.
/// - Errors: every other libpng error throws ``/TesseraCore/DecodingFailure/codec(_:message:)`` with libpng's
///   message, under either policy.
public struct PNGDecoder: ImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``/TesseraCore/ImageFileFormat/png``.
    public var format: ImageFileFormat { .png }

    /// Reads the header (IHDR and, for tRNS, the chunks before IDAT), and walks the chunk headers (not
    /// their data) for ``ImageInfo/integrity``: ``DecodeIntegrity/truncated`` when there is no IEND or a
    /// chunk runs past the end of the data.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        let data = Self.readablePrefix(of: data)
        var image = png_image()
        defer { png_image_free(&image) }
        try begin(&image, data)
        return ImageInfo(format: .png, width: Int(image.width), height: Int(image.height),
                         hasAlpha: image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0,
                         isGrayscale: image.format & UInt32(PNG_FORMAT_FLAG_COLOR) == 0,
                         integrity: Self.integrity(of: data))
    }

    /// The smallest box-reduced size (by an integer factor) that covers twice `target`; the stored size without one.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize {
        guard let target, target.width > 0, target.height > 0 else { return info.storedSize }
        // At least twice the target, so that the resampling after it still averages two or more
        // pixels per output pixel (a single box from the full size, as closely as two stages can).
        let factor = max(1, min(info.width / (2 * target.width), info.height / (2 * target.height)))
        return Self.reduced(info.storedSize, by: factor)
    }

    /// `size` box-reduced by `factor`: ⌈width / factor⌉ × ⌈height / factor⌉.
    static func reduced(_ size: PixelSize, by factor: Int) -> PixelSize {
        PixelSize(width: (size.width + factor - 1) / factor, height: (size.height + factor - 1) / factor)
    }

    /// The largest factor that reduces `stored` to `size`, if any (several factors can give one size).
    static func factor(reducing stored: PixelSize, to size: PixelSize) -> Int? {
        guard size.width > 0, size.height > 0, stored.width > 0, stored.height > 0 else { return nil }
        // ⌈n / f⌉ == m  ⇔  ⌈n / m⌉ ≤ f ≤ ⌊(n − 1) / (m − 1)⌋ (no upper bound when m == 1).
        func range(_ n: Int, _ m: Int) -> ClosedRange<Int>? {
            let low = (n + m - 1) / m
            let high = m == 1 ? Int.max : (n - 1) / (m - 1)
            return low <= high ? low...high : nil
        }
        guard let across = range(stored.width, size.width), let down = range(stored.height, size.height) else { return nil }
        let low = max(across.lowerBound, down.lowerBound), high = min(across.upperBound, down.upperBound)
        guard low <= high else { return nil }
        return high == Int.max ? max(low, stored.width, stored.height) : high
    }

    /// ``PixelStyle/bgra32``, ``PixelStyle/bgr32`` and ``PixelStyle/gray8``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style != .bgr565 }

    /// Decodes the image into `target`, whose size is the stored size or a reduction of it from
    /// ``decodedSize(for:atLeast:)``. A file whose data ends early decodes under ``DecodingPolicy/lenient``
    /// as the type's "Errors" describe, and returns ``DecodeIntegrity/truncated``.
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        let data = Self.readablePrefix(of: data)
        do {
            try decodePixels(data, info: info, into: target)
        } catch {
            guard case .decoding(.truncated(.png)) = error.reason, limits.policy == .lenient else { throw error }
            return try decodeTruncated(data, info: info, into: target, failure: error)
        }
        // libpng stops reading after the last row it needs: a file cut after that (no IEND) has every pixel.
        if Self.integrity(of: data) == .truncated {
            return try limits.acceptTruncation(decodedRows: info.height, of: info.height, format: .png)
        }
        return .intact
    }

    /// The rows that arrived of a file whose data ends early (`failure` is libpng's truncation error):
    /// libpng's progressive reader collects their samples (``tessera_png_salvage``), a complete copy
    /// with zero samples for the other rows decodes through the usual path (so those rows are exactly
    /// the whole file's), and the rows that did not arrive are filled: ``DecodeIntegrity/fillGray``,
    /// opaque, when the image has no alpha; transparent when it has an alpha channel or tRNS. For Adam7,
    /// the missing pixels show the latest pass that covers them, as Chromium draws a partial interlaced PNG.
    private func decodeTruncated(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView,
                                 failure: TesseraError) throws(TesseraError) -> DecodeIntegrity {
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw failure }
        var salvage = tessera_png_salvage()
        let status = Int(tessera_png_salvage(base, data.count, &salvage))
        defer { tessera_png_salvage_free(&salvage) }
        if status == TESSERA_PNG_NO_MEMORY { throw TesseraError(.decoding(.codec(.png, message: "out of memory"))) }
        guard status == TESSERA_PNG_OK, let file = salvage.file, Int(salvage.width) == info.width, Int(salvage.height) == info.height
        else { throw failure }
        let integrity = try limits.acceptTruncation(decodedRows: Int(salvage.arrived_rows), of: info.height, format: .png)
        let rebuilt = UnsafeRawBufferPointer(start: file, count: salvage.file_size)
        // The rebuilt file is uncompressed, so it may be larger than the input limit the real input met.
        var inner = self
        inner.limits.maximumInputBytes = .max
        let layout = target.layout
        guard let factor = Self.factor(reducing: info.storedSize, to: layout.size) else {
            throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow))
        }
        if salvage.interlaced == 0 {
            try inner.decodePixels(rebuilt, info: info, into: target)
            target.fillMissingRows(from: Int(salvage.received_rows.0) / factor, transparent: info.hasAlpha)
            return integrity
        }
        // Adam7: complete the full-size premultiplied BGRA decode, then reduce and convert it as the target needs.
        let full = BitmapLayout(width: info.width, height: info.height, style: .bgra32)
        let fill: UInt32 = info.hasAlpha ? 0 : 0xFF00_0000 | UInt32(DecodeIntegrity.fillGray) * 0x01_0101
        if layout.style == .bgra32, factor == 1 {
            try inner.decodePixels(rebuilt, info: info, into: target)
            tessera_png_fill_missing(target.baseAddress.assumingMemoryBound(to: UInt8.self), layout.bytesPerRow, &salvage, fill)
            return integrity
        }
        let temp = UnsafeMutableRawPointer.allocate(byteCount: full.byteCount, alignment: PixelStyle.rowAlignment)
        defer { temp.deallocate() }
        try inner.decodePixels(rebuilt, info: info, into: MutableBitmapView(layout: full, baseAddress: temp))
        tessera_png_fill_missing(temp.assumingMemoryBound(to: UInt8.self), full.bytesPerRow, &salvage, fill)
        var source = UnsafeRawPointer(temp), sourceLayout = full
        var reduced: UnsafeMutableRawPointer?
        defer { reduced?.deallocate() }
        if factor > 1 {
            let small = BitmapLayout(width: layout.width, height: layout.height, style: .bgra32)
            let memory = UnsafeMutableRawPointer.allocate(byteCount: small.byteCount, alignment: PixelStyle.rowAlignment)
            reduced = memory
            guard tessera_box_reduce_bgra(temp.assumingMemoryBound(to: UInt8.self), full.bytesPerRow, Int32(full.width), Int32(full.height),
                                          Int32(factor), memory.assumingMemoryBound(to: UInt8.self), small.bytesPerRow) == 0
            else { throw TesseraError(.decoding(.codec(.png, message: "out of memory"))) }
            source = UnsafeRawPointer(memory)
            sourceLayout = small
        }
        try PixelConversion.convert(source: source, layout: sourceLayout, to: target)
        return integrity
    }

    /// `data` up to the first chunk other than IDAT whose declared length runs past the end of the data
    /// (all of `data` when there is none): the bytes libpng is given. libpng allocates a chunk's declared
    /// length before reading its data, so a 427-byte file whose `tEXt` declares 2 GiB would make it
    /// allocate 2 GiB; cut there, the file ends before that chunk (it is truncated, and decodes or fails
    /// as a truncated file does) and every allocation stays within the input's size. IDAT data is
    /// streamed through zlib, never allocated by its declared length, so a cut IDAT stays as it is.
    static func readablePrefix(of data: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var offset = 8
        while offset + 8 <= data.count {
            let length = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            let isIDAT = data[offset + 4] == 0x49 && data[offset + 5] == 0x44 && data[offset + 6] == 0x41 && data[offset + 7] == 0x54
            if length > data.count - offset - 12 {
                return isIDAT ? data : UnsafeRawBufferPointer(rebasing: data[..<offset])
            }
            offset += 12 + length
        }
        return data
    }

    /// ``DecodeIntegrity/truncated`` when the chunks after the signature end without IEND or run past
    /// the end of `data`; ``DecodeIntegrity/intact`` otherwise. Reads chunk headers only.
    static func integrity(of data: UnsafeRawBufferPointer) -> DecodeIntegrity {
        var offset = 8
        while offset + 8 <= data.count {
            let length = Int(data[offset]) << 24 | Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3])
            guard length <= data.count - offset - 12 else { return .truncated }
            if data[offset + 4] == 0x49, data[offset + 5] == 0x45, data[offset + 6] == 0x4E, data[offset + 7] == 0x44 { return .intact }   // IEND
            offset += 12 + length
        }
        return .truncated
    }

    private func decodePixels(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) {
        try limits.checkInput(byteCount: data.count)
        // Colour (docs/COLOUR.md): a usable iCCP profile of a colour image converts the decoded pixels
        // to sRGB and overrides gAMA/cHRM, which are then cut from a copy that libpng decodes;
        // without one, libpng's handling of gAMA (and sRGB) stays as it is.
        let chunks = EmbeddedProfile.png(data)
        let isColour = Self.isColourType(data)
        let use = isColour ? chunks.profile.map { ColourConversion.use(of: $0, for: .rgb) } : nil
        if let use, use.isUsable, chunks.hasNonSRGBGamma {
            let copy = EmbeddedProfile.pngWithoutGammaChunks(data, chunks)
            let result: Result<Void, TesseraError> = copy.withUnsafeBytes { bytes in
                do throws(TesseraError) { return .success(try decodePixels(bytes, into: target, transform: use.transform, hasAlpha: info.hasAlpha)) }
                catch { return .failure(error) }
            }
            return try result.get()
        }
        try decodePixels(data, into: target, transform: use?.transform, hasAlpha: info.hasAlpha)
    }

    /// Whether the IHDR colour type has colour (2, 3 or 6); a gray file's profile is not an RGB one.
    private static func isColourType(_ data: UnsafeRawBufferPointer) -> Bool {
        data.count > 25 && data[25] & 2 != 0
    }

    /// Decodes `data` and converts the result with `transform` (premultiplied when the file `hasAlpha`,
    /// before bgr32 drops the alpha).
    private func decodePixels(_ data: UnsafeRawBufferPointer, into target: MutableBitmapView,
                              transform: ColourTransform?, hasAlpha: Bool) throws(TesseraError) {
        var image = png_image()
        defer { png_image_free(&image) }
        try begin(&image, data)
        let layout = target.layout
        let stored = PixelSize(width: Int(image.width), height: Int(image.height))
        guard supportsDirectDecode(to: layout.style), let factor = Self.factor(reducing: stored, to: layout.size),
              layout.bytesPerRow <= Int(Int32.max)
        else { throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow)) }

        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let sourceIsPlainGray = image.format & UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_ALPHA) == 0
        if layout.style == .gray8 && factor == 1 && sourceIsPlainGray {
            try finish(&image, into: target, format: UInt32(PNG_FORMAT_GRAY))
            return
        }
        if layout.style == .gray8 {
            // libpng would compute luma in linear light; go through premultiplied BGRA instead so
            // that gray8 is the same Rec. 601 luma (over black) as every other path in Tessera.
            let bgra = BitmapLayout(width: layout.width, height: layout.height, style: .bgra32)
            let temp = UnsafeMutableRawPointer.allocate(byteCount: bgra.byteCount, alignment: PixelStyle.rowAlignment)
            defer { temp.deallocate() }
            let view = MutableBitmapView(layout: bgra, baseAddress: temp)
            try decodePremultiplied(&image, data, factor: factor, into: view)
            transform?.apply(to: view, premultiplied: hasAlpha)
            try PixelConversion.convert(source: UnsafeRawPointer(temp), layout: bgra, to: target)
            return
        }
        try decodePremultiplied(&image, data, factor: factor, into: target)
        transform?.apply(to: target, premultiplied: hasAlpha)
        target.setOpaqueAfterPremultipliedDecode()
    }

    /// Premultiplied BGRA, box-reduced by `factor`, into `target` (4 bytes per pixel): the fast path
    /// when it takes the file, libpng's simplified API otherwise.
    private func decodePremultiplied(_ image: inout png_image, _ data: UnsafeRawBufferPointer, factor: Int,
                                     into target: MutableBitmapView) throws(TesseraError) {
        let layout = target.layout
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        let result = tessera_png_decode_reduced(base, data.count, Int32(factor), target.baseAddress.assumingMemoryBound(to: UInt8.self),
                                                layout.bytesPerRow, Int32(layout.width), Int32(layout.height))
        if Int(result) == TESSERA_PNG_OK { return }
        if Int(result) == TESSERA_PNG_NO_MEMORY { throw TesseraError(.decoding(.codec(.png, message: "out of memory"))) }
        let bgraFormat = UInt32(PNG_FORMAT_FLAG_COLOR | PNG_FORMAT_FLAG_BGR | PNG_FORMAT_FLAG_ALPHA)
        if factor == 1 {
            try finish(&image, into: target, format: bgraFormat)
            PixelConversion.premultiplyBGRA(target)
            return
        }
        let full = BitmapLayout(width: Int(image.width), height: Int(image.height), style: .bgra32)
        guard full.bytesPerRow <= Int(Int32.max) else {
            throw TesseraError(.invalidLayout(width: full.width, height: full.height, bytesPerRow: full.bytesPerRow))
        }
        let temp = UnsafeMutableRawPointer.allocate(byteCount: full.byteCount, alignment: PixelStyle.rowAlignment)
        defer { temp.deallocate() }
        let view = MutableBitmapView(layout: full, baseAddress: temp)
        try finish(&image, into: view, format: bgraFormat)
        PixelConversion.premultiplyBGRA(view)
        guard tessera_box_reduce_bgra(temp.assumingMemoryBound(to: UInt8.self), full.bytesPerRow, Int32(full.width),
                                      Int32(full.height), Int32(factor), target.baseAddress.assumingMemoryBound(to: UInt8.self),
                                      layout.bytesPerRow) == 0
        else { throw TesseraError(.decoding(.codec(.png, message: "out of memory"))) }
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
