import Foundation

/// Tessera's default decoder: recognises the format, checks limits before allocating, decodes with
/// the codec's cheap downscaling path, applies EXIF orientation, converts to the requested pixel
/// style and resamples with high quality into memory you provide.
///
/// ```swift
/// let decoder = ImageDecoder()
/// let info = try decoder.probe(data)                      // header only
/// let thumb = try decoder.thumbnail(data, size: PixelSize(width: 100, height: 100))
/// try decoder.decode(data, into: slotView, mode: .fill)   // straight into a table slot
/// ```
///
/// Damaged and truncated files decode as browsers show them under ``DecodingPolicy/lenient`` (the
/// default of ``DecodingLimits/policy``): every method that returns a ``Bitmap`` sets its
/// ``Bitmap/integrity``, and the ones that decode into caller memory return the ``DecodeIntegrity``.
///
/// The value is immutable and `Sendable`; share one instance across threads.
public struct ImageDecoder: Sendable {
    /// Limits checked before any pixel memory is allocated.
    public let limits: DecodingLimits
    /// The codecs tried, matched by ``/TesseraCore/ImageFileFormat`` sniffed from the data's first bytes.
    public let decoders: [any ImageDecoding]

    /// A decoder with the given limits and codecs (by default JPEG, PNG, WebP, GIF, HEIC and AVIF, each with `limits`).
    public init(limits: DecodingLimits = .default, decoders: [any ImageDecoding]? = nil) {
        self.limits = limits
        self.decoders = decoders ?? Self.standardDecoders(limits: limits)
    }

    // MARK: Probing

    /// Reads format, size, orientation and alpha from the header without decoding pixels.
    public func probe(_ data: Data) throws(TesseraError) -> ImageInfo {
        try Self.withBytes(of: data) { (bytes) throws(TesseraError) in try probe(bytes: bytes).info }
    }

    /// The codec for `bytes` and what it reads from the header, after the input and dimension limits.
    public func probe(bytes: UnsafeRawBufferPointer) throws(TesseraError) -> (decoder: any ImageDecoding, info: ImageInfo) {
        try limits.checkInput(byteCount: bytes.count)
        guard let format = ImageFileFormat(sniffing: bytes) else {
            let prefix = bytes.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
            throw TesseraError(.decoding(.unsupportedFormat(signature: prefix)))
        }
        guard let decoder = decoders.first(where: { $0.format == format }) else {
            throw TesseraError(.decoding(.unsupportedFormat(signature: "\(format) (no decoder configured)")))
        }
        let info = try decoder.probe(bytes)
        try limits.checkDimensions(width: info.width, height: info.height)
        return (decoder, info)
    }

    // MARK: Decoding to a new bitmap

    /// Decodes upright (orientation applied) in `style`. With `minimumSize` the codec's cheap path
    /// shrinks the image to the smallest size it supports that still covers `minimumSize`.
    public func decode(_ data: Data, style: PixelStyle = .bgra32, minimumSize: PixelSize? = nil) throws(TesseraError) -> Bitmap {
        try Self.withBytes(of: data) { (bytes) throws(TesseraError) in
            let (decoder, info) = try probe(bytes: bytes)
            let stored = decoder.decodedSize(for: info, atLeast: minimumSize.map { info.orientation.swapsAxes ? $0.transposed : $0 })
            if info.orientation == .up, decoder.supportsDirectDecode(to: style) {
                var integrity = DecodeIntegrity.intact
                var bitmap = try Bitmap(width: stored.width, height: stored.height, style: style) { (view) throws(TesseraError) in
                    integrity = try decoder.decode(bytes, info: info, into: view)
                }
                bitmap.integrity = integrity
                return bitmap
            }
            let raw = try decodeStored(bytes, decoder: decoder, info: info, size: stored)
            let shown = info.orientation.displaySize(of: stored)
            var bitmap = try Self.render(raw, orientation: info.orientation, size: shown, style: style, mode: .stretch)
            bitmap.integrity = raw.integrity
            return bitmap
        }
    }

    /// A thumbnail of exactly `size` in `style`, placed by `mode` (``ContentMode/fill`` crops,
    /// ``ContentMode/fit`` leaves transparent bars), decoded with the cheap downscaling path.
    public func thumbnail(_ data: Data, size: PixelSize, mode: ContentMode = .fill,
                          style: PixelStyle = .bgra32) throws(TesseraError) -> Bitmap {
        var integrity = DecodeIntegrity.intact
        var bitmap = try Bitmap(width: size.width, height: size.height, style: style) { (view) throws(TesseraError) in
            view.prepareForDrawing()
            integrity = try Self.withBytes(of: data) { (bytes) throws(TesseraError) in try decode(bytes: bytes, into: view, mode: mode) }
        }
        bitmap.integrity = integrity
        return bitmap
    }

    /// Decodes once, upright in `style`, just large enough (through the cheap path) to be drawn with
    /// `mode` into every size in `targets` without upscaling: one decode for a family of formats.
    public func decode(_ data: Data, covering targets: [PixelSize], mode: ContentMode = .fill,
                       style: PixelStyle = .bgra32) throws(TesseraError) -> Bitmap {
        let info = try probe(data)
        var needed = PixelSize(width: 1, height: 1)
        for target in targets {
            let size = mode.coveringSize(of: info.displaySize, in: target)
            needed = PixelSize(width: max(needed.width, size.width), height: max(needed.height, size.height))
        }
        return try decode(data, style: style, minimumSize: needed)
    }

    // MARK: Decoding into caller memory

    /// Decodes `data` into `target` (for example a memory-mapped table slot), scaled to the target's
    /// size by `mode`, upright, in the target's style and stride.
    ///
    /// When the codec can produce the target's exact size and style (no turn, no crop, no resample),
    /// pixels are decoded straight into `target` with no intermediate buffer. Otherwise the cheap
    /// scaled decode goes to a temporary bitmap that cairo resamples into `target` (box filter).
    /// Pixels of `target` outside the placed image (``ContentMode/fit`` bars) are left as they are.
    /// Returns how complete the decoded pixels are.
    @discardableResult
    public func decode(_ data: Data, into target: MutableBitmapView, mode: ContentMode = .fill) throws(TesseraError) -> DecodeIntegrity {
        try Self.withBytes(of: data) { (bytes) throws(TesseraError) in try decode(bytes: bytes, into: target, mode: mode) }
    }

    /// ``decode(_:into:mode:)`` on raw bytes.
    @discardableResult
    public func decode(bytes: UnsafeRawBufferPointer, into target: MutableBitmapView, mode: ContentMode = .fill) throws(TesseraError) -> DecodeIntegrity {
        let (decoder, info) = try probe(bytes: bytes)
        let bounds = Rect(size: target.layout.size)
        let placed = mode.placement(of: info.displaySize, in: bounds)
        let needed = mode.coveringSize(of: info.displaySize, in: target.layout.size)
        let storedNeeded = info.orientation.swapsAxes ? needed.transposed : needed
        let stored = decoder.decodedSize(for: info, atLeast: storedNeeded)
        if info.orientation == .up, stored == target.layout.size, placed == bounds,
           decoder.supportsDirectDecode(to: target.layout.style) {
            return try decoder.decode(bytes, info: info, into: target)
        }
        let raw = try decodeStored(bytes, decoder: decoder, info: info, size: stored)
        try Self.drawing(into: target) { (context) throws(TesseraError) in
            try context.draw(raw, in: bounds, mode: mode, orientation: info.orientation)
        }
        return raw.integrity
    }

    // MARK: Internals

    private func decodeStored(_ bytes: UnsafeRawBufferPointer, decoder: any ImageDecoding, info: ImageInfo,
                              size: PixelSize) throws(TesseraError) -> Bitmap {
        var integrity = DecodeIntegrity.intact
        var bitmap = try Bitmap(width: size.width, height: size.height, style: .bgra32) { (view) throws(TesseraError) in
            integrity = try decoder.decode(bytes, info: info, into: view)
        }
        bitmap.integrity = integrity
        return bitmap
    }

    /// Draws `source` into a new bitmap of `size`/`style`, turned by `orientation`.
    static func render(_ source: Bitmap, orientation: ImageOrientation, size: PixelSize, style: PixelStyle,
                       mode: ContentMode) throws(TesseraError) -> Bitmap {
        try Bitmap(width: size.width, height: size.height, style: style) { (view) throws(TesseraError) in
            view.prepareForDrawing()
            try drawing(into: view) { (context) throws(TesseraError) in
                try context.draw(source, in: context.bounds, mode: mode, orientation: orientation)
            }
        }
    }

    private static func drawing(into view: MutableBitmapView, _ body: (DrawingContext) throws(TesseraError) -> Void) throws(TesseraError) {
        let context = try DrawingContext(target: view)
        try body(context)
        context.flush()
    }

    static func withBytes<R>(of data: Data, _ body: (UnsafeRawBufferPointer) throws(TesseraError) -> R) throws(TesseraError) -> R {
        let result: Result<R, TesseraError> = data.withUnsafeBytes { bytes in
            do throws(TesseraError) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
