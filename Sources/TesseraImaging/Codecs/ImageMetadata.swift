import Foundation

/// The descriptive metadata of an image file that an output can carry: EXIF (a TIFF structure, the payload
/// after JPEG's `Exif\0\0`), XMP (an XML packet) and IPTC-IIM (its datasets, as Photoshop's resource
/// `0x0404` holds them).
///
/// ```swift
/// let kept = ImageMetadata(reading: sourceBytes).kept(.copyright)
/// let bytes = try ImageEncoder(format: .jpeg, metadata: kept).encode(thumbnail)
/// ```
///
/// Where each is read from and written to:
///
/// | | EXIF | XMP | IPTC |
/// |---|---|---|---|
/// | JPEG | APP1 `Exif\0\0` | APP1 `http://ns.adobe.com/xap/1.0/\0` | APP13 `Photoshop 3.0\0`, resource `0x0404` |
/// | PNG | `eXIf` chunk | `iTXt` keyword `XML:com.adobe.xmp` (uncompressed) | none (PNG has no IPTC chunk) |
/// | WebP | `EXIF` chunk | `XMP ` chunk | none (WebP has no IPTC chunk) |
/// | AVIF (written only) | an `Exif` item | a `mime` item | none |
///
/// Bounds: each part is read only when it is at most ``maximumPartBytes`` (larger ones are left out, never
/// truncated), and a JPEG segment holds at most 65,533 bytes, so a part that does not fit one segment is
/// left out of a JPEG output (XMP's extended form, split over segments, is not written).
public struct ImageMetadata: Sendable, Hashable {
    /// The EXIF TIFF structure (starting `II*\0` or `MM\0*`), or `nil`.
    public var exif: [UInt8]?
    /// The XMP packet (UTF-8 XML), or `nil`.
    public var xmp: [UInt8]?
    /// The IPTC-IIM datasets (each `1C`, record, dataset, a 2-byte length, the value), or `nil`.
    public var iptc: [UInt8]?

    /// The largest part read: 1 MiB (a JPEG holds at most 64 KiB of EXIF; XMP with an embedded preview
    /// is the large case).
    public static let maximumPartBytes = 1 << 20

    /// Metadata of the given parts.
    public init(exif: [UInt8]? = nil, xmp: [UInt8]? = nil, iptc: [UInt8]? = nil) {
        self.exif = exif
        self.xmp = xmp
        self.iptc = iptc
    }

    /// Whether there is nothing to write.
    public var isEmpty: Bool { exif == nil && xmp == nil && iptc == nil }

    /// The metadata of a JPEG, PNG or WebP file (empty for other formats, and for parts that are
    /// malformed or over ``maximumPartBytes``). Never throws: metadata that cannot be read is left out.
    public init(reading data: Data) {
        self = data.withUnsafeBytes { Self.read($0) }
    }

    /// What `policy` keeps of the metadata of `data` (``kept(_:)``); for ``ImageProcessing/Metadata/strip``
    /// nothing, without reading `data`.
    public init(reading data: Data, keeping policy: ImageProcessing.Metadata) {
        self = policy == .strip ? ImageMetadata() : ImageMetadata(reading: data).kept(policy)
    }

    /// What `policy` keeps of this metadata: nothing for ``ImageProcessing/Metadata/strip``.
    public func kept(_ policy: ImageProcessing.Metadata) -> ImageMetadata {
        switch policy {
        case .strip: return ImageMetadata()
        case .copyright: return keepingCopyright()
        case .keep: return keepingAll()
        }
    }

    /// Every part, with EXIF's orientation tag (IFD0 `0x0112`) and XMP's `tiff:Orientation` set to 1, as
    /// the output's pixels are already turned upright.
    public func keepingAll() -> ImageMetadata {
        ImageMetadata(exif: exif.map(TIFFMetadata.withOrientationReset), xmp: xmp.map(XMPPacket.withOrientationReset), iptc: iptc)
    }

    /// The rights only: EXIF's `Artist` (`0x013B`) and `Copyright` (`0x8298`) in a new TIFF structure;
    /// XMP's `dc:creator`, `dc:rights`, `xmpRights:*`, `cc:license`, `cc:attributionName` and
    /// `plus:Licensor` in a new packet; IPTC's coded character set (1:90), record version (2:0), by-line
    /// (2:80, the artist) and copyright notice (2:116). A part with none of these is left out.
    public func keepingCopyright() -> ImageMetadata {
        ImageMetadata(exif: exif.flatMap(TIFFMetadata.copyrightOnly), xmp: xmp.flatMap(XMPPacket.rightsOnly),
                      iptc: iptc.flatMap(IPTCDatasets.copyrightOnly))
    }
}
