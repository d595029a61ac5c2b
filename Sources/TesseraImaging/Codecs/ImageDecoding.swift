/// One codec's decoder: probes headers and decodes pixels into memory the caller provides.
///
/// Codecs work in the *stored* orientation; ``ImageDecoder`` applies EXIF orientation, converts to
/// the requested style and resamples. A codec must never longjmp through Swift frames or abort:
/// every failure is a thrown ``/TesseraCore/TesseraError``.
public protocol ImageDecoding: Sendable {
    /// The format this decoder reads.
    var format: ImageFileFormat { get }

    /// Reads the header: size, orientation, alpha. Must not decode pixels or allocate pixel memory.
    func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo

    /// The smallest size the codec can produce cheaply (JPEG DCT scaling 1/2, 1/4, 1/8; WebP scaled
    /// decode) that is not smaller than `target` in either dimension, in stored orientation;
    /// the full stored size when there is no cheaper path or `target` is `nil`.
    func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize

    /// Whether ``decode(_:info:into:)`` can write `style` directly. Every decoder supports
    /// ``PixelStyle/bgra32``; others are converted by ``ImageDecoder``.
    func supportsDirectDecode(to style: PixelStyle) -> Bool

    /// Decodes into `target`, whose size is a value returned by ``decodedSize(for:atLeast:)`` and whose
    /// style is one ``supportsDirectDecode(to:)`` accepts, honouring its `bytesPerRow`.
    /// `info` is what ``probe(_:)`` returned for the same data.
    ///
    /// Returns how complete the pixels are. Under ``DecodingPolicy/lenient`` (``DecodingLimits/policy``)
    /// recoverable damage returns ``DecodeIntegrity/damaged`` and data that ends early returns
    /// ``DecodeIntegrity/truncated`` with the missing rows filled (``DecodeIntegrity/fillGray``, or
    /// transparent where the format has alpha); under ``DecodingPolicy/strict`` both throw.
    @discardableResult
    func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity
}
