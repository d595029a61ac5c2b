import CHeif

/// Encodes AVIF with libheif and its AV1 encoder (libaom on Debian), lossy, 4:2:0.
///
/// Pixels are un-premultiplied into a packed RGB or RGBA copy first (`copyPixels(as:)`, then the
/// alpha bytes dropped when every pixel is opaque, so an opaque image carries no alpha item):
/// AVIF stores straight alpha. The copy costs `width × height × 4` bytes, small next to the
/// encoder's own buffers.
///
/// AV1 encoding is slow next to JPEG: a 200×200 thumbnail takes about 4 ms of one core at ``speed`` 9
/// (the default), 15 ms at speed 8 and twice that at libaom's own default of 6, for files about 10–20 %
/// smaller at each step down (docs/PERFORMANCE.md, "AVIF speed"). So ``threads`` defaults to 1 and callers
/// bound parallel encodes themselves (`tessera serve` runs them under its encode limit).
public struct AVIFEncoder: ImageEncoding {
    /// Quality 0…100 (libheif's scale, mapped by libaom onto its quantizer; values outside are
    /// clamped). 60 is close to JPEG 85 in appearance at about half the bytes.
    public var quality: Int
    /// libaom's speed 0…9 (slowest, smallest … fastest; values outside are clamped). Default
    /// ``defaultSpeed``.
    public var speed: Int
    /// The speed an encoder has unless told otherwise: 9, fast enough that a thumbnail's first request
    /// waits on its decode more than on its encode.
    public static let defaultSpeed = 9
    /// Threads libaom may use for one image (1…16, clamped). Default 1: the encode runs on the
    /// caller's thread only, so a bound on parallel encodes is a bound on cores.
    public var threads: Int
    /// How a viewer must turn the stored pixels (EXIF semantics), written as the file's `irot` and
    /// `imir` boxes instead of turning the pixels. Default ``ImageOrientation/up`` (no boxes).
    public var orientation: ImageOrientation
    /// EXIF and XMP written as the image's metadata items (IPTC has no place in AVIF); empty by default.
    public var metadata = ImageMetadata()

    /// Creates an encoder with `quality` (default 60), `speed` (default ``defaultSpeed``), `threads`
    /// (default 1) and `orientation` (default ``ImageOrientation/up``).
    public init(quality: Int = 60, speed: Int = defaultSpeed, threads: Int = 1, orientation: ImageOrientation = .up) {
        self.quality = quality
        self.speed = speed
        self.threads = threads
        self.orientation = orientation
    }

    /// ``/TesseraCore/ImageFileFormat/avif``.
    public var format: ImageFileFormat { .avif }

    /// Encodes `image` as an AVIF file.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        guard image.width > 0, image.height > 0, image.width <= 65_536, image.height <= 65_536 else {
            throw failure("AVIF holds 1…65536 pixels per side, not \(image.width)×\(image.height)")
        }
        let rgba = image.copyPixels(as: ExportedPixelFormat(order: .rgba, premultiplied: false))
        var hasAlpha = false
        if image.style == .bgra32 {
            for index in stride(from: 3, to: rgba.count, by: 4) where rgba[index] != 255 { hasAlpha = true; break }
        }
        guard let context = heif_context_alloc() else { throw failure("cannot allocate a libheif context") }
        defer { heif_context_free(context) }
        var encoder: OpaquePointer?
        try check(heif_context_get_encoder_for_format(context, heif_compression_AV1, &encoder))
        guard let encoder else { throw failure("libheif has no AV1 encoder") }
        defer { heif_encoder_release(encoder) }
        try check(heif_encoder_set_lossy_quality(encoder, Int32(min(max(quality, 0), 100))))
        try check(heif_encoder_set_parameter_integer(encoder, "speed", Int32(min(max(speed, 0), 9))))
        try check(heif_encoder_set_parameter_integer(encoder, "threads", Int32(min(max(threads, 1), 16))))
        let pixels = try makeImage(rgba, width: image.width, height: image.height, hasAlpha: hasAlpha)
        defer { heif_image_release(pixels) }
        guard let options = heif_encoding_options_alloc() else { throw failure("cannot allocate libheif encoding options") }
        defer { heif_encoding_options_free(options) }
        // libheif's orientation values are EXIF's (1…8), as ImageOrientation's raw values are.
        options.pointee.image_orientation = heif_orientation(rawValue: UInt32(orientation.rawValue))
        var handle: OpaquePointer?
        try check(heif_context_encode_image(context, pixels, encoder, options, &handle))
        defer { if let handle { heif_image_handle_release(handle) } }
        // libheif writes the EXIF item's 4-byte offset to the TIFF header itself.
        if let exif = metadata.exif, exif.count <= ImageMetadata.maximumPartBytes {
            try check(heif_context_add_exif_metadata(context, handle, exif, Int32(exif.count)))
        }
        if let xmp = metadata.xmp, xmp.count <= ImageMetadata.maximumPartBytes {
            try check(heif_context_add_XMP_metadata(context, handle, xmp, Int32(xmp.count)))
        }
        let sink = ByteSink()
        var writer = heif_writer(writer_api_version: 1) { _, data, size, userdata in
            let sink = Unmanaged<ByteSink>.fromOpaque(userdata!).takeUnretainedValue()
            if let data { sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size)) }
            return heif_error(code: heif_error_Ok, subcode: heif_suberror_Unspecified, message: ByteSink.success)
        }
        try check(heif_context_write(context, &writer, Unmanaged.passUnretained(sink).toOpaque()))
        withExtendedLifetime(sink) {}
        return sink.bytes
    }

    /// A libheif RGB(A) image of `width` × `height` holding `rgba` (4 bytes per pixel, alpha
    /// dropped unless `hasAlpha`).
    private func makeImage(_ rgba: [UInt8], width: Int, height: Int, hasAlpha: Bool) throws(TesseraError) -> OpaquePointer {
        var created: OpaquePointer?
        try check(heif_image_create(Int32(width), Int32(height), heif_colorspace_RGB,
                                    hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, &created))
        guard let created else { throw failure("heif_image_create returned no image") }
        do throws(TesseraError) {
            try check(heif_image_add_plane(created, heif_channel_interleaved, Int32(width), Int32(height), 8))
        } catch {
            heif_image_release(created)
            throw error
        }
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane(created, heif_channel_interleaved, &stride) else {
            heif_image_release(created)
            throw failure("libheif returned no plane")
        }
        let channels = hasAlpha ? 4 : 3
        rgba.withUnsafeBufferPointer { source in
            for y in 0..<height {
                let row = plane + y * Int(stride), from = y * width * 4
                if hasAlpha {
                    row.update(from: source.baseAddress! + from, count: width * 4)
                } else {
                    for x in 0..<width {
                        row[x &* channels] = source[from &+ x &* 4]
                        row[x &* channels &+ 1] = source[from &+ x &* 4 &+ 1]
                        row[x &* channels &+ 2] = source[from &+ x &* 4 &+ 2]
                    }
                }
            }
        }
        return created
    }

    private func check(_ error: heif_error) throws(TesseraError) {
        guard error.code != heif_error_Ok else { return }
        throw failure(error.message.map { String(cString: $0) } ?? "libheif error \(error.code.rawValue)")
    }

    private func failure(_ message: String) -> TesseraError { TesseraError(.encoding(format: .avif, message: message)) }
}

/// Collects what libheif's writer callback hands over. Used by one encode on one thread.
private final class ByteSink {
    var bytes: [UInt8] = []
    /// The message of the success value the callback returns: a static string's bytes, valid for
    /// the whole run (libheif never frees it).
    static var success: UnsafePointer<CChar> {
        UnsafeRawPointer(("Success" as StaticString).utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
