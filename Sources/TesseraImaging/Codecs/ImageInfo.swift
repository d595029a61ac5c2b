/// What a probe learns from an image's header, without decoding pixels.
public struct ImageInfo: Sendable, Hashable, Codable {
    /// The file format.
    public var format: ImageFileFormat
    /// Width of the stored pixels (before orientation).
    public var width: Int
    /// Height of the stored pixels (before orientation).
    public var height: Int
    /// EXIF orientation (``ImageOrientation/up`` when there is none).
    public var orientation: ImageOrientation
    /// Whether the image may have transparent pixels.
    public var hasAlpha: Bool
    /// Whether the image is grayscale (JPEG/PNG colour type), when the format says so.
    public var isGrayscale: Bool
    /// Frames in the file: 1 for a still image. For a GIF the count stops at
    /// ``DecodingLimits/maximumFrameCount`` + 1 (enough to know that decoding every frame would be refused)
    /// and at the first damaged record.
    public var frameCount: Int
    /// Sizes of the embedded thumbnails the codec can decode instead of the full image (the
    /// thumbnail items of a HEIC or AVIF file, as declared, already turned like the image), smallest
    /// first; empty for the other formats. ``ImageDecoding/decodedSize(for:atLeast:)`` picks one
    /// when it covers the target.
    public var thumbnailSizes: [PixelSize]
    /// ``DecodeIntegrity/truncated`` when the header already shows that the data ends before the image
    /// does (no JPEG EOI, no PNG IEND, a WebP shorter than its RIFF size, a GIF without its trailer);
    /// ``DecodeIntegrity/intact`` otherwise. Damage inside the data shows only when decoding: see the
    /// integrity that ``ImageDecoding/decode(_:info:into:)`` returns.
    public var integrity: DecodeIntegrity

    /// Creates an info value.
    public init(format: ImageFileFormat, width: Int, height: Int, orientation: ImageOrientation = .up,
                hasAlpha: Bool, isGrayscale: Bool = false, frameCount: Int = 1, thumbnailSizes: [PixelSize] = [],
                integrity: DecodeIntegrity = .intact) {
        self.integrity = integrity
        self.frameCount = frameCount
        self.thumbnailSizes = thumbnailSizes
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.isGrayscale = isGrayscale
    }

    /// Size of the stored pixels.
    public var storedSize: PixelSize { PixelSize(width: width, height: height) }

    /// Size as displayed, after orientation (width and height swapped for 90° turns).
    public var displaySize: PixelSize { orientation.displaySize(of: storedSize) }
}
