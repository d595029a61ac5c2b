/// An encoded image file format: every format Tessera reads. The one format vocabulary of the library,
/// the service and the command line. Which of them Tessera also writes is the imaging layer's to say
/// (`isEncodable`, `ImageFileFormat.encodable`, next to `ImageEncoder`).
public enum ImageFileFormat: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// JPEG (JFIF/EXIF), baseline or progressive.
    case jpeg
    /// PNG.
    case png
    /// WebP, lossy or lossless.
    case webp
    /// GIF (the first frame is decoded).
    case gif
    /// HEIC: a HEIF container (ISO/IEC 23008-12) of HEVC-coded images, as phones write them.
    case heic
    /// AVIF: a HEIF container of AV1-coded images.
    case avif

    /// Recognises the format from the first bytes (magic numbers); `nil` when none matches.
    public init?(sniffing bytes: UnsafeRawBufferPointer) {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + magic.count else { return false }
            for (i, byte) in magic.enumerated() where bytes[offset + i] != byte { return false }
            return true
        }
        if starts([0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            self = .png
        } else if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) {
            self = .webp
        } else if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) {
            self = .gif
        } else if let heif = Self.sniffHEIF(bytes) {
            self = heif
        } else {
            return nil
        }
    }

    /// The brands of an ISO base media `ftyp` box (a 32-bit big-endian box size, `ftyp`, the major
    /// brand, a minor version, then compatible brands up to the box's end) that name a HEIF file:
    /// AVIF when the major brand or a compatible one is `avif`/`avis`, HEIC when one is a HEVC
    /// brand (`heic`, `heix`, `hevc`, `hevx`, `heim`, `heis`, `hevm`, `hevs`) or, failing both, one
    /// of the generic HEIF brands `mif1`/`msf1` (libheif decodes whatever codec the items use).
    /// The major brand decides before the compatible ones.
    private static func sniffHEIF(_ bytes: UnsafeRawBufferPointer) -> ImageFileFormat? {
        guard bytes.count >= 16, bytes[4] == 0x66, bytes[5] == 0x74, bytes[6] == 0x79, bytes[7] == 0x70 else { return nil }
        let declared = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        func brand(at offset: Int) -> String { String(decoding: bytes[offset..<offset + 4], as: UTF8.self) }
        var brands = [brand(at: 8)]
        var offset = 16
        while offset + 4 <= min(bytes.count, declared), brands.count < 64 {
            brands.append(brand(at: offset))
            offset += 4
        }
        let avif: Set = ["avif", "avis"], hevc: Set = ["heic", "heix", "hevc", "hevx", "heim", "heis", "hevm", "hevs"]
        if avif.contains(brands[0]) { return .avif }
        if hevc.contains(brands[0]) { return .heic }
        if brands.contains(where: avif.contains) { return .avif }
        if brands.contains(where: { hevc.contains($0) || $0 == "mif1" || $0 == "msf1" }) { return .heic }
        return nil
    }

    /// Whether the format can store transparent pixels (every format but JPEG).
    public var supportsTransparency: Bool { self != .jpeg }

    /// The media type (`image/jpeg`, `image/png`, …): a response's `Content-Type`.
    public var mediaType: String { "image/\(rawValue)" }

    /// The format whose ``mediaType`` is `mediaType` (`image/jpeg` is ``jpeg``); `nil` for any other text.
    public init?(mediaType: String) {
        guard mediaType.hasPrefix("image/"), let format = Self(rawValue: String(mediaType.dropFirst(6))) else { return nil }
        self = format
    }

    /// The usual file-name extension.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The format's name in upper case, as people write it.
    public var description: String { rawValue.uppercased() }
}
