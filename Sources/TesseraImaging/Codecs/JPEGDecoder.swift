import CTesseraCodecs
import CTurboJPEG

/// Decodes JPEG (baseline, progressive, grayscale, CMYK/YCCK) with libjpeg-turbo's TurboJPEG API.
///
/// - Scaling: DCT scaling by the factors TurboJPEG offers (1/8 … 1/1; never upscales).
/// - Direct styles: ``PixelStyle/bgra32`` and ``PixelStyle/bgr32`` (both decoded as `TJPF_BGRA`,
///   whose fourth byte TurboJPEG guarantees to be 255 — opaque, so trivially premultiplied) and
///   ``PixelStyle/gray8`` (`TJPF_GRAY`, luma of the YCbCr data).
/// - CMYK/YCCK: TurboJPEG cannot convert these to RGB, so they are decoded as `TJPF_CMYK` and
///   converted here the way Pillow does: with an Adobe APP14 segment (Photoshop and libjpeg write
///   one) the stored values are inverted, so `R = C·K / 255` on the stored values; without it they
///   are taken as plain CMYK, `R = (255 − C)(255 − K) / 255`. Likewise for G (M) and B (Y).
/// - Colour: an ICC profile in APP2 "ICC_PROFILE" segments (assembled in sequence order) converts the
///   decoded, already DCT-scaled pixels to sRGB (`ColourConversion`, docs/COLOUR.md): RGB profiles
///   for YCbCr/RGB files (gray8 output then takes its luma from the converted colours), CMYK profiles
///   for CMYK/YCCK files instead of the formula above (inverted input when the Adobe segment is
///   present). Gray files, and profiles that are unusable or equivalent to sRGB, keep their pixels.
/// - Warnings, under ``DecodingPolicy/lenient`` (the default): a libjpeg warning never fails a decode.
///   Damage libjpeg recovers from (extraneous bytes before a marker, a corrupt entropy segment that a
///   restart marker ends, a JFIF segment of an unknown version …) keeps libjpeg-turbo's pixels and
///   returns ``DecodeIntegrity/damaged``; extraneous bytes count as damage too. Data that ends early
///   ("Premature end of JPEG file": libjpeg's source inserts an EOI) returns
///   ``DecodeIntegrity/truncated``: the rows that came from data are libjpeg's, down to the end of the
///   MCU row in which the data ended (of the DCT-scaled output), and the rows below are filled with
///   ``DecodeIntegrity/fillGray`` (B = G = R = 128, opaque; 128 for gray8; after any CMYK or ICC
///   conversion). A progressive file cut after its first scan has every row, at the quality of the
///   scans that arrived; cut inside that scan, only the rows it reached count. A file cut inside a
///   marker segment between scans is decoded up to that segment. Fewer rows than
///   ``DecodingLimits/minimumDecodedFraction`` throw ``/TesseraCore/DecodingFailure/truncated(_:)``, and so does
///   data whose headers stop before the first scan. A file that lacks only its EOI is truncated with
///   every row. ``probe(_:)`` reports ``DecodeIntegrity/truncated`` already when no EOI follows the scans.
/// - Warnings, under ``DecodingPolicy/strict``: "Premature end of JPEG file" / "premature end of
///   data segment" throw ``/TesseraCore/DecodingFailure/truncated(_:)``; every other libjpeg warning except
///   "extraneous bytes before marker" throws ``/TesseraCore/DecodingFailure/codec(_:message:)`` (extraneous bytes
///   alone decode, as ``DecodeIntegrity/damaged``). Any failure on data whose headers stop before the
///   first scan, or that has a scan but no EOI after it, is reported as ``/TesseraCore/DecodingFailure/truncated(_:)``.
/// - The three paths agree: TurboJPEG's `tjDecompress2` reports only its first warning and not where
///   the data ended, so a file it finds possibly cut (that warning, or no EOI after the scans), and
///   under strict a file whose first warning is extraneous bytes, is decoded again through the libjpeg
///   shim, which sees every warning and counts the rows that came from data.
/// - Progressive files with more than 500 scans are rejected (`TJFLAG_LIMITSCANS`), a guard
///   against CPU-exhaustion inputs.
/// - libjpeg's own API (through the C shim `tessera_jpeg.c`, which keeps `setjmp`/`longjmp` in C)
///   decodes what TurboJPEG's API cannot: files whose subsampling it cannot name (4:1:0, 4:1:1,
///   4:4:0 …), with the same scaling, styles, warnings and scan limit. It also decodes progressive
///   files at 1/8 scale: there a component reduced to its DC coefficient does not need its AC scans,
///   which are left out of the input (same pixels, a fraction of the entropy decoding).
/// - Baseline files (8-bit Huffman, one interleaved scan, gray or YCbCr with 1x1 chroma) at 1/8
///   scale go through a DC-only decoder (`tessera_jpeg_dc.c`) that skips the AC symbols without
///   decoding their values (4:2:0 chroma, for which libjpeg keeps a 2x2 inverse DCT at this scale,
///   is decoded with its values and reduced the same way): TurboJPEG's pixels, bit for bit. It
///   declines any other file, any file it finds damaged or truncated, and any whose headers libjpeg
///   would warn about (bytes between segments, a JFIF version other than 1.x, an unknown Adobe
///   transform); those go to TurboJPEG and, as above, the shim, so the result and its integrity are
///   the other paths'.
/// - Progressive gray, 4:4:4 and 4:2:2 files at 1/8 scale (every component reduced to its DC
///   coefficient) go through the same decoder's progressive mode: the AC scans are skipped unread and
///   the DC scans (with successive approximation) decoded into one coefficient per block, instead of
///   libjpeg's whole-image coefficient arrays; the pixels are the shim's. Progressive 4:2:0 (whose
///   chroma keeps a 2x2 inverse DCT at this scale) and anything it declines go to the shim.
public struct JPEGDecoder: ImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``/TesseraCore/ImageFileFormat/jpeg``.
    public var format: ImageFileFormat { .jpeg }

    /// The header facts TurboJPEG reports.
    struct Header {
        var width: Int, height: Int, colorspace: Int32
        /// TurboJPEG could not read the header (an unnamed subsampling); libjpeg's API did.
        var needsLibjpeg = false
        var isCMYK: Bool { colorspace == TJCS_CMYK.rawValue || colorspace == TJCS_YCCK.rawValue }
    }

    /// Reads size and colour space with `tjDecompressHeader3`, the EXIF orientation, and whether the
    /// marker structure shows that the data ends early (no EOI after the scans:
    /// ``ImageInfo/integrity`` is then ``DecodeIntegrity/truncated``). Reads the headers only, plus,
    /// for a file that does not end with EOI, a backward search of its bytes for one.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        let header = try readHeader(data)
        let markers = ExifOrientationReader.scan(jpeg: data)
        let truncated = ExifOrientationReader.looksTruncated(jpeg: data, findings: markers)
        return ImageInfo(format: .jpeg, width: header.width, height: header.height, orientation: markers.orientation,
                         hasAlpha: false, isGrayscale: header.colorspace == TJCS_GRAY.rawValue,
                         integrity: truncated ? .truncated : .intact)
    }

    /// The scaling factors no larger than 1/1, largest first, as (numerator, denominator).
    static let scalingFactors: [(num: Int, denom: Int)] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count), count > 0 else { return [(1, 1)] }
        let all = (0..<Int(count)).map { (num: Int(factors[$0].num), denom: Int(factors[$0].denom)) }
        let downscaling = all.filter { $0.num > 0 && $0.denom > 0 && $0.num <= $0.denom }
        return downscaling.sorted { $0.num * $1.denom > $1.num * $0.denom }
    }()

    /// TurboJPEG's `TJSCALED`: `⌈dimension × num / denom⌉`.
    static func scaled(_ dimension: Int, _ factor: (num: Int, denom: Int)) -> Int {
        (dimension * factor.num + factor.denom - 1) / factor.denom
    }

    /// The smallest DCT-scaled size that is at least `target` in both dimensions.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize {
        let full = info.storedSize
        guard let target else { return full }
        var best = full
        for factor in Self.scalingFactors {
            let w = Self.scaled(info.width, factor), h = Self.scaled(info.height, factor)
            guard w >= target.width, h >= target.height else { break }   // factors are sorted descending
            best = PixelSize(width: w, height: h)
        }
        return best
    }

    /// ``PixelStyle/bgra32``, ``PixelStyle/bgr32`` and ``PixelStyle/gray8``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style != .bgr565 }

    /// Decodes into `target` (a size from ``decodedSize(for:atLeast:)``). Returns
    /// ``DecodeIntegrity/damaged`` when libjpeg warned (under ``DecodingPolicy/lenient``, or for
    /// extraneous bytes before a marker under either policy) and ``DecodeIntegrity/truncated`` when
    /// the data ended early, with the rows that got no data filled with ``DecodeIntegrity/fillGray``.
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        let outcome = try decodePixels(data, info: info, into: target)
        if outcome.decodedRows < target.layout.height { target.fillMissingRows(from: max(0, outcome.decodedRows), transparent: false) }
        return outcome.integrity
    }

    /// What a decode made of the data: its integrity, and the rows of the output that came from data
    /// (the rest are filled by ``decode(_:info:into:)``).
    struct Outcome {
        var integrity: DecodeIntegrity
        var decodedRows: Int
    }

    private func decodePixels(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> Outcome {
        try limits.checkInput(byteCount: data.count)
        let layout = target.layout
        guard let handle = tjInitDecompress() else { throw codecError("cannot create a TurboJPEG handle") }
        defer { tjDestroy(handle) }
        let header = try readHeader(data, handle: handle)
        guard supportsDirectDecode(to: layout.style), layout.bytesPerRow <= Int(Int32.max),
              Self.scalingFactors.contains(where: {
                  Self.scaled(header.width, $0) == layout.width && Self.scaled(header.height, $0) == layout.height
              })
        else { throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow)) }

        // libjpeg's API for what TurboJPEG cannot read, and for progressive files at 1/8 scale.
        var scale = (num: 1, denom: 1)
        if let factor = Self.scalingFactors.first(where: {
            Self.scaled(header.width, $0) == layout.width && Self.scaled(header.height, $0) == layout.height
        }) { scale = factor }
        let viaLibjpeg = header.needsLibjpeg || (scale.num * 8 == scale.denom && Self.isProgressive(data))
        // The DC-only decoder first at 1/8, baseline or progressive; it declines what it cannot take.
        let viaDC = !header.needsLibjpeg && scale.num * 8 == scale.denom
        let decompress = { (buffer: UnsafeMutableRawPointer, pitch: Int, pixelFormat: TJPF) throws(TesseraError) -> Outcome in
            if viaLibjpeg {
                return try libjpegDecompress(data, into: buffer, width: layout.width, pitch: pitch, height: layout.height,
                                             scale: scale, pixelFormat: pixelFormat)
            }
            return try self.decompress(handle, data, into: buffer, width: layout.width, pitch: pitch, height: layout.height,
                                       scale: scale, pixelFormat: pixelFormat)
        }

        let markers = ExifOrientationReader.scan(jpeg: data)
        let profile = markers.iccSegments.isEmpty ? nil : EmbeddedProfile.jpeg(data, segments: markers.iccSegments)
        if !header.isCMYK {
            // An embedded RGB profile converts the decoded (already scaled) pixels to sRGB; gray8 then
            // goes through BGRA, so that its luma is that of the converted colours.
            let transform = header.colorspace == TJCS_GRAY.rawValue ? nil : profile.flatMap { ColourConversion.use(of: $0, for: .rgb).transform }
            if let transform, layout.style == .gray8 {
                var outcome = Outcome(integrity: .intact, decodedRows: layout.height)
                try Self.withBGRA(size: layout.size) { (bgra) throws(TesseraError) in
                    outcome = try decodeColour(data, into: bgra, gray: false, viaDC: viaDC, decompress)
                    transform.apply(to: bgra)
                    try PixelConversion.convert(source: UnsafeRawPointer(bgra.baseAddress), layout: bgra.layout, to: target)
                }
                return outcome
            }
            let outcome = try decodeColour(data, into: target, gray: layout.style == .gray8, viaDC: viaDC, decompress)
            transform?.apply(to: target)
            return outcome
        }
        // CMYK through the embedded CMYK profile when it is usable, with the naive formula otherwise.
        let inverted = markers.hasAdobeMarker
        let transform = profile.flatMap { ColourConversion.use(of: $0, for: inverted ? .cmykInverted : .cmyk).transform }
        let toBGRA = { (view: MutableBitmapView) in
            if let transform { return transform.apply(to: view) }
            for y in 0..<view.layout.height { Self.cmykToBGRA(view.row(y), width: view.layout.width, inverted: inverted) }
        }
        if layout.style.bytesPerPixel == 4 {
            // CMYK is 4 bytes per pixel too: decode in place, then convert each pixel in place.
            let outcome = try decompress(target.baseAddress, layout.bytesPerRow, TJPF_CMYK)
            toBGRA(target)
            return outcome
        }
        var outcome = Outcome(integrity: .intact, decodedRows: layout.height)
        try Self.withBGRA(size: layout.size) { (bgra) throws(TesseraError) in
            outcome = try decompress(bgra.baseAddress, bgra.layout.bytesPerRow, TJPF_CMYK)
            toBGRA(bgra)
            try PixelConversion.convert(source: UnsafeRawPointer(bgra.baseAddress), layout: bgra.layout, to: target)
        }
        return outcome
    }

    /// Decodes a gray or YCbCr file as gray or BGRA into `target`: files at 1/8 (`viaDC`) through the
    /// DC-only decoder (tessera_jpeg_dc.c) when it takes the file (it declines anything damaged or
    /// truncated, and progressive 4:2:0), `decompress` otherwise.
    private func decodeColour(_ data: UnsafeRawBufferPointer, into target: MutableBitmapView, gray: Bool, viaDC: Bool,
                              _ decompress: (UnsafeMutableRawPointer, Int, TJPF) throws(TesseraError) -> Outcome) throws(TesseraError) -> Outcome {
        let layout = target.layout
        if viaDC, let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self),
           Int(tessera_jpeg_decode_dc(base, data.count, Int32(gray ? TESSERA_JPEG_GRAY : TESSERA_JPEG_BGRA),
                                      target.baseAddress.assumingMemoryBound(to: UInt8.self), layout.bytesPerRow,
                                      Int32(layout.width), Int32(layout.height))) == TESSERA_JPEG_OK {
            return Outcome(integrity: .intact, decodedRows: layout.height)
        }
        return try decompress(target.baseAddress, layout.bytesPerRow, gray ? TJPF_GRAY : TJPF_BGRA)
    }

    /// Runs `body` with a temporary ``PixelStyle/bgra32`` bitmap of `size`.
    private static func withBGRA(size: PixelSize, _ body: (MutableBitmapView) throws(TesseraError) -> Void) throws(TesseraError) {
        let layout = BitmapLayout(width: size.width, height: size.height, style: .bgra32)
        let temp = UnsafeMutableRawPointer.allocate(byteCount: layout.byteCount, alignment: PixelStyle.rowAlignment)
        defer { temp.deallocate() }
        try body(MutableBitmapView(layout: layout, baseAddress: temp))
    }

    /// Converts a row of CMYK pixels to opaque BGRA in place; see the type's documentation.
    static func cmykToBGRA(_ row: UnsafeMutableRawPointer, width: Int, inverted: Bool) {
        let p = row.assumingMemoryBound(to: UInt8.self)
        for x in 0..<width {
            let o = x &* 4
            var c = UInt32(p[o]), m = UInt32(p[o &+ 1]), y = UInt32(p[o &+ 2]), k = UInt32(p[o &+ 3])
            if !inverted { c = 255 &- c; m = 255 &- m; y = 255 &- y; k = 255 &- k }
            p[o] = PixelConversion.mulDiv255(y, k)
            p[o &+ 1] = PixelConversion.mulDiv255(m, k)
            p[o &+ 2] = PixelConversion.mulDiv255(c, k)
            p[o &+ 3] = 255
        }
    }

    private func readHeader(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> Header {
        try limits.checkInput(byteCount: data.count)
        guard let handle = tjInitDecompress() else { throw codecError("cannot create a TurboJPEG handle") }
        defer { tjDestroy(handle) }
        return try readHeader(data, handle: handle)
    }

    private func readHeader(_ data: UnsafeRawBufferPointer, handle: tjhandle) throws(TesseraError) -> Header {
        try limits.checkInput(byteCount: data.count)
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        if tjDecompressHeader3(handle, base, UInt(data.count), &width, &height, &subsampling, &colorspace) != 0,
           !headerWarningAccepted(handle, width: width, height: height) {
            // TurboJPEG's API knows only the subsamplings it can name; libjpeg's own API reads the rest.
            guard Self.message(handle).contains("subsampling") else { throw failure(handle, data) }
            var header = tessera_jpeg_header()
            var text = [CChar](repeating: 0, count: Int(TESSERA_JPEG_MESSAGE_LENGTH))
            guard Int(tessera_jpeg_read_header(base, data.count, &header, &text)) == TESSERA_JPEG_OK else {
                throw failure(message: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), data)
            }
            try limits.checkDimensions(width: Int(header.width), height: Int(header.height))
            let spaces: [Int: TJCS] = [TESSERA_JPEG_CS_GRAY: TJCS_GRAY, TESSERA_JPEG_CS_RGB: TJCS_RGB,
                                       TESSERA_JPEG_CS_CMYK: TJCS_CMYK, TESSERA_JPEG_CS_YCCK: TJCS_YCCK]
            return Header(width: Int(header.width), height: Int(header.height),
                          colorspace: Int32((spaces[Int(header.color_space)] ?? TJCS_YCbCr).rawValue), needsLibjpeg: true)
        }
        if width <= 0 || height <= 0, ExifOrientationReader.looksTruncated(jpeg: data) {   // tables only so far
            throw TesseraError(.decoding(.truncated(.jpeg)))
        }
        try limits.checkDimensions(width: Int(width), height: Int(height))
        return Header(width: Int(width), height: Int(height), colorspace: colorspace)
    }

    /// Decodes with `tjDecompress2`. A warning leaves TurboJPEG's pixels complete (it never stops on
    /// one), but its message is only the first warning and it cannot say where the data ended: when
    /// the data may have ended early ("Premature end of JPEG file", or no EOI after the scans) the
    /// file is decoded again through the libjpeg shim, which can; other warnings are damage. An
    /// error on data that ends early goes to the shim too, under ``DecodingPolicy/lenient``.
    /// Whether the header TurboJPEG read despite a libjpeg warning (it then still fills in the size)
    /// is accepted: extraneous bytes before a marker under either policy, any warning under
    /// ``DecodingPolicy/lenient`` (the decode reports the damage).
    private func headerWarningAccepted(_ handle: tjhandle, width: Int32, height: Int32) -> Bool {
        guard tjGetErrorCode(handle) == TJERR_WARNING.rawValue, width > 0, height > 0 else { return false }
        return limits.policy == .lenient || Self.message(handle).contains("extraneous bytes before marker")
    }

    private func decompress(_ handle: tjhandle, _ data: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawPointer,
                            width: Int, pitch: Int, height: Int, scale: (num: Int, denom: Int),
                            pixelFormat: TJPF) throws(TesseraError) -> Outcome {
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        let result = tjDecompress2(handle, base, UInt(data.count), buffer.assumingMemoryBound(to: UInt8.self),
                                   Int32(width), Int32(pitch), Int32(height), pixelFormat.rawValue, TJFLAG_LIMITSCANS)
        guard result != 0 else { return Outcome(integrity: .intact, decodedRows: height) }
        let message = Self.message(handle)
        let warning = tjGetErrorCode(handle) == TJERR_WARNING.rawValue
        let extraneous = message.contains("extraneous bytes before marker")
        if limits.policy == .strict {
            // Extraneous bytes pass, every other warning and error throws. TurboJPEG's message is its
            // first warning only: after extraneous bytes the shim, which sees every warning, decides.
            guard warning, extraneous else { throw failure(message: message, data) }
            return try libjpegDecompress(data, into: buffer, width: width, pitch: pitch, height: height, scale: scale,
                                         pixelFormat: pixelFormat)
        }
        let mayBeTruncated = message.contains("Premature end of JPEG file") || ExifOrientationReader.looksTruncated(jpeg: data)
        if mayBeTruncated {
            return try libjpegDecompress(data, into: buffer, width: width, pitch: pitch, height: height, scale: scale,
                                         pixelFormat: pixelFormat)
        }
        guard warning else { throw failure(message: message, data) }
        return Outcome(integrity: try limits.acceptDamage(message, format: .jpeg), decodedRows: height)
    }

    /// Decodes with libjpeg's API through the C shim (progressive files lose the AC scans that the
    /// scale makes useless; a single-scan file stops where its data ended). Under
    /// ``DecodingPolicy/strict`` every warning but extraneous bytes throws, as on the TurboJPEG path;
    /// under ``DecodingPolicy/lenient`` warnings make the result ``DecodeIntegrity/damaged`` and data
    /// that ended early ``DecodeIntegrity/truncated`` (``DecodingLimits/acceptTruncation(decodedRows:of:format:)``).
    private func libjpegDecompress(_ data: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawPointer, width: Int,
                                   pitch: Int, height: Int, scale: (num: Int, denom: Int), pixelFormat: TJPF) throws(TesseraError) -> Outcome {
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        let format = switch pixelFormat {
        case TJPF_GRAY: TESSERA_JPEG_GRAY
        case TJPF_CMYK: TESSERA_JPEG_CMYK
        default: TESSERA_JPEG_BGRA
        }
        var text = [CChar](repeating: 0, count: Int(TESSERA_JPEG_MESSAGE_LENGTH))
        var report = tessera_jpeg_report()
        let result = Int(tessera_jpeg_decode(base, data.count, Int32(scale.num), Int32(scale.denom), Int32(format),
                                             buffer.assumingMemoryBound(to: UInt8.self), pitch, Int32(width), Int32(height), 1,
                                             &report, &text))
        let message = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if result == TESSERA_JPEG_ERROR { throw failure(message: message, data) }
        if limits.policy == .strict {
            if result == TESSERA_JPEG_WARNING { throw failure(message: message, data) }
            return Outcome(integrity: report.warnings > 0 ? .damaged : .intact, decodedRows: height)
        }
        if report.truncated != 0 {
            let rows = Int(report.decoded_rows)
            return Outcome(integrity: try limits.acceptTruncation(decodedRows: rows, of: height, format: .jpeg), decodedRows: rows)
        }
        if report.warnings > 0 { return Outcome(integrity: try limits.acceptDamage(message, format: .jpeg), decodedRows: height) }
        return Outcome(integrity: .intact, decodedRows: height)
    }

    /// Whether `data`'s frame is progressive (SOF2).
    static func isProgressive(_ data: UnsafeRawBufferPointer) -> Bool {
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        return tessera_jpeg_is_progressive(base, data.count) != 0
    }

    /// The typed error for TurboJPEG's last error or warning on `handle`.
    private func failure(_ handle: tjhandle, _ data: UnsafeRawBufferPointer) -> TesseraError {
        failure(message: Self.message(handle), data)
    }

    /// The typed error for libjpeg's `message`. libjpeg often reports a cut-off file as some other
    /// error (the EOI it fakes at the end lands inside a table), so the marker structure of `data`
    /// is checked too.
    private func failure(message: String, _ data: UnsafeRawBufferPointer) -> TesseraError {
        if message.lowercased().contains("premature end") || ExifOrientationReader.looksTruncated(jpeg: data) {
            return TesseraError(.decoding(.truncated(.jpeg)))
        }
        return codecError(message)
    }

    private static func message(_ handle: tjhandle) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "unknown TurboJPEG error" }
        return String(cString: text)
    }

    private func codecError(_ message: String) -> TesseraError {
        TesseraError(.decoding(.codec(.jpeg, message: message)))
    }
}
