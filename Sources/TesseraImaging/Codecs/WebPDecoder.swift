import CWebP

/// Decodes WebP images (lossy, lossless, with or without alpha) with libwebp; animated files decode
/// their first frame here (at full canvas size) and every frame through ``decodeAnimation(_:)``
/// (`WebPDecoder+Animation.swift`, libwebpdemux).
///
/// - Direct styles: ``PixelStyle/bgra32`` (libwebp's premultiplied `MODE_bgrA`, written straight
///   into the target) and ``PixelStyle/bgr32`` (the same, then the fourth byte set to 255, which
///   composites over black).
/// - Scaling: libwebp's built-in scaler (`use_scaling`) decodes at any size no larger than the
///   stored one; ``decodedSize(for:atLeast:)`` picks the aspect-preserving size that just covers
///   the target.
/// - Colour: an `ICCP` chunk (extended format) converts the decoded, scaled pixels to sRGB
///   (`ColourConversion`, docs/COLOUR.md).
/// - Truncated files: a still image decodes through libwebp's incremental decoder (`WebPIDecode`,
///   `WebPIUpdate`), which reports in `last_y` how many rows it produced before the data ran out (output
///   rows: of the scaled size when scaling). Under ``DecodingPolicy/lenient`` those rows are kept (colour
///   converted as above) and the rest is filled: transparent when the image has alpha,
///   ``DecodeIntegrity/fillGray`` (opaque) when it has none; the decode returns
///   ``DecodeIntegrity/truncated``, or throws ``/TesseraCore/DecodingFailure/truncated(_:)`` when fewer rows than
///   ``DecodingLimits/minimumDecodedFraction`` of the output height arrived. Under
///   ``DecodingPolicy/strict`` a truncated file throws ``/TesseraCore/DecodingFailure/truncated(_:)``. Data cut before
///   the header's size and features throws ``/TesseraCore/DecodingFailure/truncated(_:)`` under either policy, and
///   the first frame of an animated file decodes through libwebpdemux, which needs the whole file. A
///   still image whose rows all decode from a RIFF container shorter than its declared size is
///   ``DecodeIntegrity/truncated`` too (lenient), or ``/TesseraCore/DecodingFailure/truncated(_:)`` (strict).
/// - Errors: `VP8_STATUS_NOT_ENOUGH_DATA` throws ``/TesseraCore/DecodingFailure/truncated(_:)``; other statuses
///   throw ``/TesseraCore/DecodingFailure/codec(_:message:)``.
public struct WebPDecoder: AnimatedImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``/TesseraCore/ImageFileFormat/webp``.
    public var format: ImageFileFormat { .webp }

    /// Reads size and alpha with `WebPGetFeatures`; ``ImageInfo/integrity`` is
    /// ``DecodeIntegrity/truncated`` when the data is shorter than the RIFF header's size.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        let features = try readFeatures(data)
        return ImageInfo(format: .webp, width: Int(features.width), height: Int(features.height),
                         hasAlpha: features.has_alpha != 0,
                         frameCount: features.has_animation != 0 ? try frameCount(data) : 1,
                         integrity: Self.integrity(of: data))
    }

    /// ``DecodeIntegrity/truncated`` when `data` is a RIFF container shorter than the size its header
    /// declares; ``DecodeIntegrity/intact`` otherwise (a bare VP8/VP8L bitstream declares no size).
    static func integrity(of data: UnsafeRawBufferPointer) -> DecodeIntegrity {
        guard data.count >= 12, data[0] == 0x52, data[1] == 0x49, data[2] == 0x46, data[3] == 0x46 else { return .intact }   // "RIFF"
        let declared = Int(data[4]) | Int(data[5]) << 8 | Int(data[6]) << 16 | Int(data[7]) << 24
        return data.count - 8 < declared ? .truncated : .intact
    }

    /// The aspect-preserving size that is at least `target` in both dimensions; the stored size
    /// when `target` is `nil` or not smaller than it in some dimension.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize {
        let full = info.storedSize
        guard info.frameCount == 1, let target, target.width > 0, target.height > 0,
              target.width < full.width, target.height < full.height else { return full }
        let (w, h, tw, th) = (full.width, full.height, target.width, target.height)
        // Width is the binding constraint when tw/w >= th/h.
        if tw * h >= th * w {
            return PixelSize(width: tw, height: min(h, max(th, (h * tw + w - 1) / w)))
        } else {
            return PixelSize(width: min(w, max(tw, (w * th + h - 1) / h)), height: th)
        }
    }

    /// ``PixelStyle/bgra32`` and ``PixelStyle/bgr32``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style == .bgra32 || style == .bgr32 }

    /// Decodes into `target`, scaling when its size is smaller than the stored size. A still image whose
    /// data ends early decodes as the type's "Truncated files" describes.
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        let features = try readFeatures(data)
        let rows = try decodePixels(data, features: features, into: target)
        // An ICCP profile converts the decoded pixels to sRGB (docs/COLOUR.md); bgr32 is opaque by now.
        let premultiplied = features.has_alpha != 0 && target.layout.style == .bgra32
        EmbeddedProfile.webp(data).flatMap { ColourConversion.use(of: $0, for: .rgb).transform }?
            .apply(to: target, premultiplied: premultiplied)
        guard let rows else {
            // Every row decoded, but the RIFF container says more data should follow.
            guard features.has_animation == 0, Self.integrity(of: data) == .truncated else { return .intact }
            return try limits.acceptTruncation(decodedRows: target.layout.height, of: target.layout.height, format: .webp)
        }
        target.fillMissingRows(from: rows, transparent: features.has_alpha != 0)
        return .truncated
    }

    /// Decodes the still image or the first frame into `target`. Returns `nil` when every row was
    /// decoded, or the number of output rows decoded before the data ran out (a truncation the limits
    /// accept; the rows after it are left for the caller to fill).
    private func decodePixels(_ data: UnsafeRawBufferPointer, features: WebPBitstreamFeatures,
                              into target: MutableBitmapView) throws(TesseraError) -> Int? {
        if features.has_animation != 0 {
            try decodeFirstFrame(data, features: features, into: target)
            return nil
        }
        let layout = target.layout
        let width = Int(features.width), height = Int(features.height)
        guard supportsDirectDecode(to: layout.style), layout.width > 0, layout.height > 0,
              layout.width <= width, layout.height <= height,
              layout.bytesPerRow <= Int(Int32.max)
        else { throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow)) }
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }

        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw TesseraError(.decoding(.codec(.webp, message: "libwebp version mismatch")))
        }
        if layout.width != width || layout.height != height {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(layout.width)
            config.options.scaled_height = Int32(layout.height)
        }
        config.output.colorspace = MODE_bgrA
        config.output.is_external_memory = 1
        config.output.width = Int32(layout.width)
        config.output.height = Int32(layout.height)
        config.output.u.RGBA.rgba = target.baseAddress.assumingMemoryBound(to: UInt8.self)
        config.output.u.RGBA.stride = Int32(layout.bytesPerRow)
        config.output.u.RGBA.size = layout.byteCount
        // The incremental decoder gives the same pixels as WebPDecode, and when the data ends early
        // reports how many output rows it has written (`last_y`).
        guard let decoder = WebPIDecode(base, data.count, &config) else {
            throw TesseraError(.decoding(.codec(.webp, message: "the incremental decoder cannot start")))
        }
        let status = WebPIUpdate(decoder, base, data.count)
        var rows: Int32 = 0
        if status == VP8_STATUS_SUSPENDED { _ = WebPIDecGetRGB(decoder, &rows, nil, nil, nil) }
        WebPIDelete(decoder)
        WebPFreeDecBuffer(&config.output)   // frees nothing external, but releases any internal state
        switch status {
        case VP8_STATUS_OK:
            target.setOpaqueAfterPremultipliedDecode()
            return nil
        case VP8_STATUS_SUSPENDED:
            _ = try limits.acceptTruncation(decodedRows: Int(rows), of: layout.height, format: .webp)
            target.setOpaqueAfterPremultipliedDecode()
            return min(max(0, Int(rows)), layout.height)
        default:
            throw failure(status)
        }
    }

    func readFeatures(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> WebPBitstreamFeatures {
        try limits.checkInput(byteCount: data.count)
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else { throw TesseraError(.decoding(.empty)) }
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(base, data.count, &features)
        guard status == VP8_STATUS_OK else { throw failure(status) }
        try limits.checkDimensions(width: Int(features.width), height: Int(features.height))
        return features
    }

    func failure(_ status: VP8StatusCode) -> TesseraError {
        let message: String
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA: return TesseraError(.decoding(.truncated(.webp)))
        case VP8_STATUS_OUT_OF_MEMORY: message = "out of memory"
        case VP8_STATUS_INVALID_PARAM: message = "invalid parameter"
        case VP8_STATUS_BITSTREAM_ERROR: message = "bitstream error"
        case VP8_STATUS_UNSUPPORTED_FEATURE: message = "unsupported feature (animation?)"
        case VP8_STATUS_SUSPENDED: message = "suspended"
        case VP8_STATUS_USER_ABORT: message = "aborted"
        default: message = "status \(status.rawValue)"
        }
        return TesseraError(.decoding(.codec(.webp, message: message)))
    }
}
