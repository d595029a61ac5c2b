import CHeif

/// A parsed HEIF container: libheif's context over the caller's bytes (not copied, so it must not
/// outlive them), the primary image's handle and its usable thumbnail items. Released on deinit.
/// Used only inside one ``HEIFDecoder`` call.
final class HEIFFile {
    let context: OpaquePointer
    let format: ImageFileFormat
    let data: UnsafeRawBufferPointer
    let limits: DecodingLimits
    let primary: OpaquePointer
    /// The primary image's size after its transformations (what libheif decodes to).
    private(set) var primarySize = PixelSize(width: 0, height: 0)
    /// Thumbnails with a positive declared size smaller than the primary image's, smallest first.
    private(set) var thumbnails: [(handle: OpaquePointer, size: PixelSize)] = []

    /// libheif's plugins (the codecs) are registered by `heif_init`, once per process.
    private static let initialized: Bool = heif_init(nil).code == heif_error_Ok

    /// libheif refuses images with a side of this many pixels or more (its own default is 32,768).
    static func sideLimit(_ limits: DecodingLimits) -> Int32 { Int32(min(limits.maximumPixelCount, 32_768)) }

    /// Checks the input and item limits and that no item derives from itself, parses the boxes and
    /// checks the primary image's size.
    init(_ data: UnsafeRawBufferPointer, format: ImageFileFormat, limits: DecodingLimits) throws(TesseraError) {
        try limits.checkInput(byteCount: data.count)
        guard let base = data.baseAddress else { throw TesseraError(.decoding(.empty)) }
        // Each instance reads its own brand only (libheif would read either), like every other codec.
        guard ImageFileFormat(sniffing: data) == format else {
            let signature = data.prefix(12).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
            throw TesseraError(.decoding(.unsupportedFormat(signature: signature)))
        }
        if let items = HEIFBoxes.itemCount(in: data) { try limits.checkItems(count: items) }
        if HEIFBoxes.hasReferenceCycle(in: data) {
            throw TesseraError(.decoding(.codec(format, message: "item references form a cycle (an image derived from itself)")))
        }
        _ = Self.initialized
        guard let context = heif_context_alloc() else {
            throw TesseraError(.decoding(.codec(format, message: "cannot allocate a libheif context")))
        }
        heif_context_set_maximum_image_size_limit(context, Self.sideLimit(limits))
        heif_context_set_max_decoding_threads(context, 0)
        var error = heif_context_read_from_memory_without_copy(context, base, data.count, nil)
        var handle: OpaquePointer?
        if error.code == heif_error_Ok { error = heif_context_get_primary_image_handle(context, &handle) }
        guard error.code == heif_error_Ok, let handle else {
            // The message lives in the context: read it before freeing the context.
            let failure = Self.failure(error, format: format, data: data)
            heif_context_free(context)
            throw failure
        }
        self.context = context
        self.primary = handle
        self.format = format
        self.data = data
        self.limits = limits
        primarySize = PixelSize(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        // From here on a throw runs deinit, which releases the handles and the context.
        try limits.checkDimensions(width: primarySize.width, height: primarySize.height)
        readThumbnails()
    }

    deinit {
        for thumbnail in thumbnails { heif_image_handle_release(thumbnail.handle) }
        heif_image_handle_release(primary)
        heif_context_free(context)
    }

    /// The primary image's thumbnail items (at most 16 looked at) that declare a positive size
    /// smaller than the primary image; others are released and ignored.
    private func readThumbnails() {
        let count = min(Int(heif_image_handle_get_number_of_thumbnails(primary)), 16)
        guard count > 0 else { return }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(primary, &ids, Int32(count)))
        for id in ids.prefix(listed) {
            var handle: OpaquePointer?
            guard heif_image_handle_get_thumbnail(primary, id, &handle).code == heif_error_Ok, let handle else { continue }
            let size = PixelSize(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
            if size.width > 0, size.height > 0, size.width < primarySize.width, size.height < primarySize.height {
                thumbnails.append((handle, size))
            } else {
                heif_image_handle_release(handle)
            }
        }
        thumbnails.sort { $0.size.width * $0.size.height < $1.size.width * $1.size.height }
    }

    /// Decodes `handle` (the primary image or one of ``thumbnails``) as 8-bit RGB(A) and writes it
    /// into `target` as premultiplied BGRA (bgr32: composited over black). The target's size must
    /// be the handle's declared size, and the decoded image must have it too.
    func decode(_ handle: OpaquePointer, into target: MutableBitmapView) throws(TesseraError) {
        let layout = target.layout
        let declared = PixelSize(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
        try limits.checkDimensions(width: declared.width, height: declared.height)
        guard declared == layout.size else {
            throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow))
        }
        // AVIF's primary image: libavif when it can (no irot/imir/clap), several times faster.
        if format == .avif, handle == primary, AVIFFastPath.decode(data, into: target, limits: limits) { return }
        // A derived image (a grid, an overlay) is drawn at the size its own descriptor gives, which
        // libheif 1.15 compares only with its side limit: a 731-byte file declaring 32x32 (`ispe`) with a
        // grid of 24950x12337 made libheif allocate and fill 307 megapixels before the size check below
        // could refuse it. The side limit for this decode is twice the declared size's longer side plus the
        // 64-pixel coding-block padding (room for a clean-aperture crop of up to half the coded picture), so
        // libheif refuses a far larger canvas before allocating it.
        heif_context_set_maximum_image_size_limit(context, min(Self.sideLimit(limits), Int32(2 * max(declared.width, declared.height) + 64)))
        let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
        guard let options = heif_decoding_options_alloc() else {
            throw TesseraError(.decoding(.codec(format, message: "cannot allocate libheif decoding options")))
        }
        defer { heif_decoding_options_free(options) }
        options.pointee.convert_hdr_to_8bit = 1
        var decoded: OpaquePointer?
        let error = heif_decode_image(handle, &decoded, heif_colorspace_RGB,
                                      hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options)
        guard error.code == heif_error_Ok, let decoded else { throw Self.failure(error, format: format, data: data) }
        defer { heif_image_release(decoded) }
        let width = Int(heif_image_get_width(decoded, heif_channel_interleaved))
        let height = Int(heif_image_get_height(decoded, heif_channel_interleaved))
        guard width == declared.width, height == declared.height else {
            throw TesseraError(.decoding(.codec(format, message:
                "the item declares \(declared.width)x\(declared.height) but its pixels are \(width)x\(height)")))
        }
        var stride: Int32 = 0
        guard heif_image_get_bits_per_pixel_range(decoded, heif_channel_interleaved) == 8,
              let plane = heif_image_get_plane_readonly(decoded, heif_channel_interleaved, &stride),
              Int(stride) >= width * (hasAlpha ? 4 : 3)
        else { throw TesseraError(.decoding(.codec(format, message: "libheif returned no 8-bit interleaved plane"))) }
        let premultiplied = heif_image_handle_is_premultiplied_alpha(handle) != 0
        for y in 0..<height {
            let source = plane + y * Int(stride)
            let row = target.row(y).assumingMemoryBound(to: UInt8.self)
            if hasAlpha {
                for x in 0..<width {
                    let o = x &* 4
                    row[o] = source[o &+ 2]; row[o &+ 1] = source[o &+ 1]; row[o &+ 2] = source[o]; row[o &+ 3] = source[o &+ 3]
                }
                if !premultiplied { PixelConversion.premultiplyRow(row, width: width) }
            } else {
                for x in 0..<width {
                    let o = x &* 4, i = x &* 3
                    row[o] = source[i &+ 2]; row[o &+ 1] = source[i &+ 1]; row[o &+ 2] = source[i]; row[o &+ 3] = 255
                }
            }
        }
        target.setOpaqueAfterPremultipliedDecode()
    }

    /// The typed error for a libheif error: ``/TesseraCore/DecodingFailure/truncated(_:)`` when libheif ran out
    /// of data or the boxes run past the end of the input, ``/TesseraCore/DecodingFailure/codec(_:message:)``
    /// with libheif's message otherwise.
    static func failure(_ error: heif_error, format: ImageFileFormat, data: UnsafeRawBufferPointer) -> TesseraError {
        if error.subcode == heif_suberror_End_of_data || HEIFBoxes.isTruncated(data) {
            return TesseraError(.decoding(.truncated(format)))
        }
        let message = error.message.map { String(cString: $0) } ?? "error \(error.code.rawValue)/\(error.subcode.rawValue)"
        return TesseraError(.decoding(.codec(format, message: message)))
    }
}
