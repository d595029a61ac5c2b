import CHeif

/// Decodes HEIC and AVIF (HEIF containers of HEVC or AV1 images) with libheif, which decodes HEVC
/// through libde265 and AV1 through dav1d (or libaom). One type serves both formats; ``format``
/// says which one an instance is registered for. An AVIF's primary image without `irot`/`imir`/`clap`
/// is decoded by libavif instead (about 4× faster at 2560×1600, same dav1d; `AVIFFastPath`), after libheif's probe
/// and the limits; anything libavif declines goes to libheif.
///
/// - Probe: libheif parses the boxes (no pixel is decoded); ``ImageInfo`` gets the primary
///   image's size after its transformations, its alpha and its thumbnail items' sizes.
/// - Orientation: libheif applies the container's `irot` (rotation), `imir` (mirror) and `clap`
///   (crop) while decoding, so the stored pixels are already upright and ``ImageInfo/orientation``
///   is always ``ImageOrientation/up``. An EXIF orientation tag inside the file is ignored: HEIF
///   readers (browsers, libvips, Apple's) follow `irot`/`imir`, and phones write the EXIF tag only
///   as a copy of them, so applying both would turn the image twice.
/// - Thumbnails: when a thumbnail item covers the target with the image's aspect ratio (within
///   1 %), ``decodedSize(for:atLeast:)`` returns its size and ``decode(_:info:into:)`` decodes it
///   instead of the full image (a phone's 320×240 preview instead of its 4032×3024 grid of tiles).
///   Otherwise the full image is decoded and ``ImageDecoder`` box-filters it down.
/// - Direct styles: ``PixelStyle/bgra32`` (premultiplied, like every decoder) and
///   ``PixelStyle/bgr32`` (composited over black). libheif decodes to 8-bit interleaved RGB(A),
///   reducing 10- and 12-bit images to 8 bits, and the rows are reordered into the target.
/// - Limits: the input size, then the item count of the `iinf` box (``DecodingLimits/maximumItemCount``,
///   which bounds grid tiles) before libheif parses anything; libheif's own largest side is set
///   to 32,768 (or the pixel limit, when smaller); the primary image's declared size is checked
///   against ``DecodingLimits/maximumPixelCount`` before decoding. An item whose pixels come out at
///   another size than it declares (a lying `ispe`) is refused after decoding, before a byte is
///   copied. Grid tiles are decoded on the calling thread (no libheif worker threads), so the
///   callers' own parallelism bound holds.
/// - Colour: an ICC profile in the item's `colr` box (`prof`/`rICC`, as phones write Display P3)
///   converts the decoded pixels to sRGB (`ColourConversion`, docs/COLOUR.md); an `nclx` description
///   is not converted (its primaries are taken as sRGB's).
/// - Errors: data that ends inside a box, or libheif's "end of data", throw
///   ``/TesseraCore/DecodingFailure/truncated(_:)``; other libheif errors throw ``/TesseraCore/DecodingFailure/codec(_:message:)``
///   with libheif's message; too many items throw ``/TesseraCore/DecodingFailure/tooManyItems(count:limit:)``.
public struct HEIFDecoder: ImageDecoding {
    /// Limits checked before any pixel memory is allocated.
    public var limits: DecodingLimits
    /// ``/TesseraCore/ImageFileFormat/heic`` or ``/TesseraCore/ImageFileFormat/avif``: the sniffed format this instance
    /// decodes, and the format reported in ``ImageInfo`` and errors.
    public let format: ImageFileFormat

    /// Creates a decoder for `format` (``/TesseraCore/ImageFileFormat/heic`` or ``/TesseraCore/ImageFileFormat/avif``; any
    /// other format is a programming error and traps) with `limits`.
    public init(format: ImageFileFormat, limits: DecodingLimits = .default) {
        precondition(format == .heic || format == .avif, "HEIFDecoder decodes HEIC or AVIF, not \(format)")
        self.format = format
        self.limits = limits
    }

    /// Parses the container and reads the primary image's size, alpha and thumbnail sizes.
    public func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo {
        let file = try HEIFFile(data, format: format, limits: limits)
        return ImageInfo(format: format, width: file.primarySize.width, height: file.primarySize.height,
                         hasAlpha: heif_image_handle_has_alpha_channel(file.primary) != 0,
                         thumbnailSizes: file.thumbnails.map(\.size))
    }

    /// The smallest thumbnail item that covers `target` with the image's aspect ratio (within
    /// 1 %) and is smaller than the image; the stored size otherwise.
    public func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize {
        guard let target else { return info.storedSize }
        return Self.thumbnailSize(in: info, covering: target) ?? info.storedSize
    }

    /// The thumbnail of ``decodedSize(for:atLeast:)``: `t` covers `target` and the image's
    /// `W`×`H` keeps its shape, |t.w/W − t.h/H| ≤ 1 % of t.w/W, which is
    /// |t.w·H − t.h·W| × 100 ≤ t.w·H in integers.
    static func thumbnailSize(in info: ImageInfo, covering target: PixelSize) -> PixelSize? {
        let (w, h) = (info.width, info.height)
        return info.thumbnailSizes.first { t in
            t.width >= target.width && t.height >= target.height && t.width < w && t.height < h
                && abs(t.width * h - t.height * w) * 100 <= t.width * h
        }
    }

    /// ``PixelStyle/bgra32`` and ``PixelStyle/bgr32``.
    public func supportsDirectDecode(to style: PixelStyle) -> Bool { style == .bgra32 || style == .bgr32 }

    /// Decodes the primary image, or the thumbnail item of the target's size, into `target`. Always
    /// ``DecodeIntegrity/intact``: libheif decodes a whole item or fails, so a cut HEIC or AVIF file
    /// throws ``/TesseraCore/DecodingFailure/truncated(_:)`` under either policy.
    @discardableResult
    public func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        let layout = target.layout
        guard supportsDirectDecode(to: layout.style), layout.width > 0, layout.height > 0 else {
            throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow))
        }
        let file = try HEIFFile(data, format: format, limits: limits)
        let handle: OpaquePointer
        if layout.size == file.primarySize {
            handle = file.primary
        } else if let thumbnail = file.thumbnails.first(where: { $0.size == layout.size }) {
            handle = thumbnail.handle
        } else {
            throw TesseraError(.invalidLayout(width: layout.width, height: layout.height, bytesPerRow: layout.bytesPerRow))
        }
        try file.decode(handle, into: target)
        // An ICC profile converts the decoded pixels to sRGB (docs/COLOUR.md); a thumbnail item without
        // a profile of its own takes the primary image's. bgr32 is opaque by now.
        let (profile, hasAlpha) = withExtendedLifetime(file) {
            (Self.iccProfile(of: handle) ?? (handle == file.primary ? nil : Self.iccProfile(of: file.primary)),
             heif_image_handle_has_alpha_channel(handle) != 0)
        }
        let premultiplied = layout.style == .bgra32 && hasAlpha
        profile.flatMap { ColourConversion.use(of: $0, for: .rgb).transform }?.apply(to: target, premultiplied: premultiplied)
        return .intact
    }

    /// The primary image's embedded ICC profile (`colr` box of type `prof` or `rICC`), raw, or
    /// `nil` when it has none (or an `nclx` description instead, which is not converted).
    @_spi(Internal) public func iccProfile(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> [UInt8]? {
        let file = try HEIFFile(data, format: format, limits: limits)
        // The handle belongs to the file: keep the file alive while the handle is read.
        return withExtendedLifetime(file) { Self.iccProfile(of: file.primary) }
    }

    /// The ICC profile of one image item, raw; `nil` without one, when libheif cannot read it, or when
    /// it declares more than `ColourConversion`'s largest profile (4 MiB), before anything is allocated.
    static func iccProfile(of handle: OpaquePointer) -> [UInt8]? {
        let type = heif_image_handle_get_color_profile_type(handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(handle)
        guard size > 0, size <= ColourConversion.maximumProfileBytes else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_raw_color_profile(handle, &profile).code == heif_error_Ok else { return nil }
        return profile
    }
}
