/// The encoder of any format Tessera writes, chosen by value: ``ImageDecoder``'s counterpart. A caller
/// names a format and a quality and never switches over codecs; the codec encoders (``JPEGEncoder``,
/// ``PNGEncoder``, ``WebPEncoder``, ``AVIFEncoder``) stay available for their own options.
///
/// ```swift
/// let encoder = ImageEncoder(format: .webp, quality: 75)
/// let bytes = try encoder.encode(bitmap)
/// ```
///
/// A transparent image encoded as JPEG (which has no alpha) is flattened onto ``background`` when one is
/// given; without one the JPEG encoder composites the premultiplied pixels over black, as ``JPEGEncoder``
/// does. A format Tessera only reads (``/TesseraImaging/TesseraCore/ImageFileFormat/isEncodable`` false:
/// HEIC) throws `.encoding(format:message:)` from `encode(_:)`. GIF and WebP also write animations
/// (`encode(_:)` given an ``Animation``).
public struct ImageEncoder: ImageEncoding {
    /// The format written.
    public var format: ImageFileFormat
    /// The quality, 1…100 (each codec clamps it to its own scale); `nil` takes the codec's default (JPEG 85,
    /// WebP 80, AVIF 60). PNG, and lossless WebP, ignore it.
    public var quality: Int?
    /// Lossless WebP (VP8L) instead of lossy; other formats ignore it.
    public var lossless: Bool
    /// libaom's speed for AVIF, 0…9 (``AVIFEncoder/speed``); other formats ignore it.
    public var speed: Int
    /// How libwebp encodes lossy WebP (``WebPEncoder/effort``, default ``WebPEncoder/Effort/standard``);
    /// other formats ignore it.
    public var webpEffort: WebPEncoder.Effort
    /// libwebp's method for lossy WebP, 0…6: ``WebPEncoder/Effort/method`` of ``webpEffort``.
    public var webpMethod: Int {
        get { webpEffort.method }
        set { webpEffort.method = newValue }
    }
    /// The colour transparent pixels are flattened onto for a format without transparency (JPEG); `nil`
    /// leaves them to the codec (JPEG: premultiplied colour, which is the image over black).
    public var background: ImageProcessing.Background?
    /// The EXIF, XMP and IPTC written into the file (``ImageMetadata``'s table says where, per format);
    /// empty by default, which writes none.
    public var metadata: ImageMetadata

    /// Creates an encoder of `format`; the other parameters are the documented properties' defaults.
    public init(format: ImageFileFormat, quality: Int? = nil, lossless: Bool = false, speed: Int = AVIFEncoder.defaultSpeed,
                webpEffort: WebPEncoder.Effort = .standard, background: ImageProcessing.Background? = nil,
                metadata: ImageMetadata = ImageMetadata()) {
        self.format = format
        self.quality = quality
        self.lossless = lossless
        self.speed = speed
        self.webpEffort = webpEffort
        self.background = background
        self.metadata = metadata
    }

    /// Encodes `image` (any ``PixelStyle``) in ``format``.
    public func encode(_ image: some BitmapImage) throws(TesseraError) -> [UInt8] {
        try encode(image, transparent: format.supportsTransparency || background == nil ? false : image.hasTransparentPixels)
    }

    /// `encode(_:)` for a caller that already knows whether `image` has transparent pixels
    /// (``BitmapImage/hasTransparentPixels``), which spares the encoder that scan.
    public func encode(_ image: some BitmapImage, transparent: Bool) throws(TesseraError) -> [UInt8] {
        let file = try encodePixels(image, transparent: transparent)
        return metadata.embedded(in: file, format: format, width: image.width, height: image.height)
    }

    /// The codec's file, without metadata (AVIF's is written by ``AVIFEncoder``).
    private func encodePixels(_ image: some BitmapImage, transparent: Bool) throws(TesseraError) -> [UInt8] {
        switch format {
        case .jpeg:
            let encoder = quality.map { JPEGEncoder(quality: $0) } ?? JPEGEncoder()
            if let background, transparent, image.style == .bgra32 {
                return try encoder.encode(Bitmap(flattening: image, onto: background))
            }
            return try encoder.encode(image)
        case .png:
            return try PNGEncoder().encode(image)
        case .webp:
            let encoder = WebPEncoder(quality: quality ?? WebPEncoder().quality, lossless: lossless, effort: webpEffort)
            return try encoder.encode(image)
        case .avif:
            var encoder = quality.map { AVIFEncoder(quality: $0, speed: speed) } ?? AVIFEncoder(speed: speed)
            encoder.metadata = metadata
            return try encoder.encode(image)
        case .gif:
            return try GIFEncoder().encode(image)
        case .heic:
            throw TesseraError(.encoding(format: format, message: "Tessera reads \(format) but does not write it"))
        }
    }

    /// Encodes every frame of `animation` in a format that animates (GIF, WebP: `ImageFileFormat.canAnimate`),
    /// else its first frame as `encode(_:)` does. Metadata is not written into animations.
    public func encode(_ animation: Animation) throws(TesseraError) -> [UInt8] {
        switch format {
        case .gif: return try GIFEncoder().encode(animation)
        case .webp: return try (quality.map { WebPEncoder(quality: $0, lossless: lossless) } ?? WebPEncoder(lossless: lossless)).encode(animation)
        default:
            guard let first = animation.frames.first else {
                throw TesseraError(.encoding(format: format, message: "an animation without frames"))
            }
            return try encode(first.image)
        }
    }
}
