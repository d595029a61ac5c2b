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
///   (``ColourConversion``, docs/COLOUR.md).
/// - Errors: `VP8_STATUS_NOT_ENOUGH_DATA` throws ``DecodingFailure/truncated(_:)``; other statuses
///   throw ``DecodingFailure/codec(_:message:)``.
public struct WebPDecoder: AnimatedImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits

    /// Creates a decoder with `limits`.
    public init(limits: DecodingLimits = .default) { self.limits = limits }

    /// ``ImageFileFormat/webp``.
    public var format: ImageFileFormat { .webp }

    /// Reads size and alpha with `WebPGetFeatures`.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        let features = try readFeatures(data)
        return ImageInfo(format: .webp, width: Int(features.width), height: Int(features.height),
                         hasAlpha: features.has_alpha != 0,
                         frameCount: features.has_animation != 0 ? try frameCount(data) : 1)
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

    /// Decodes into `target`, scaling when its size is smaller than the stored size.
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        try decodePixels(data, info: info, into: target)
        return .intact
    }

    private func decodePixels(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) {
        let features = try readFeatures(data)
        try decodePixels(data, features: features, into: target)
        // An ICCP profile converts the decoded pixels to sRGB (docs/COLOUR.md); bgr32 is opaque by now.
        let premultiplied = features.has_alpha != 0 && target.layout.style == .bgra32
        EmbeddedProfile.webp(data).flatMap { ColourConversion.use(of: $0, for: .rgb).transform }?
            .apply(to: target, premultiplied: premultiplied)
    }

    /// Decodes the still image or the first frame into `target`.
    private func decodePixels(_ data: UnsafeRawBufferPointer, features: WebPBitstreamFeatures,
                              into target: MutableBitmapView) throws(TesseraError) {
        if features.has_animation != 0 { return try decodeFirstFrame(data, features: features, into: target) }
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
        let status = WebPDecode(base, data.count, &config)
        WebPFreeDecBuffer(&config.output)   // frees nothing external, but releases any internal state
        guard status == VP8_STATUS_OK else { throw failure(status) }
        target.setOpaqueAfterPremultipliedDecode()
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
