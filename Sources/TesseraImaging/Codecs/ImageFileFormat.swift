/// An encoded image file format that Tessera reads.
public enum ImageFileFormat: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// JPEG (JFIF/EXIF), baseline or progressive.
    case jpeg
    /// PNG.
    case png
    /// WebP, lossy or lossless.
    case webp
    /// GIF (the first frame is decoded).
    case gif

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
        } else {
            return nil
        }
    }

    /// The usual file-name extension.
    public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

    /// The format's name in upper case, as people write it.
    public var description: String { rawValue.uppercased() }
}
