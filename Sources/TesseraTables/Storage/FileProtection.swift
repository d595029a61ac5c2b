import TesseraImaging
/// The permission mode of an image table file.
///
/// It protects against *other local users* reading (or writing) the cached pixels through the file
/// system, nothing more: the pixels are not encrypted, and anyone running as the owner (or root) can
/// read them. The table's directory is created with mode `0o700` as well.
public struct FileProtection: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The POSIX permission bits, for example `0o600`.
    public let mode: UInt16

    /// A protection with explicit permission bits (only the low 9 bits are used).
    public init(mode: UInt16) { self.mode = mode & 0o777 }

    /// Read and write for the owner only (`0o600`), the default.
    public static let ownerOnly = FileProtection(mode: 0o600)

    /// Owner read/write, group read (`0o640`), for caches shared with a service group.
    public static let ownerWriteGroupRead = FileProtection(mode: 0o640)

    /// `"0o600"`.
    public var description: String { "0o" + String(mode, radix: 8) }
}
