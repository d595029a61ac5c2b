import TesseraImaging
/// How much of an ``ImageTable`` is in use.
public struct TableUsage: Sendable, Hashable, CustomStringConvertible {
    /// Bytes the file occupies on disk (`st_blocks × 512`; less than ``fileSize`` while sparse).
    public var bytesOnDisk: Int
    /// The file's size (`st_size`).
    public var fileSize: Int
    /// Committed entries.
    public var entryCount: Int
    /// The format's `maximumCount`.
    public var capacity: Int
    /// Slots the file currently has room for.
    public var slotsInFile: Int
    /// Bytes per row of an entry.
    public var bytesPerRow: Int
    /// Bytes per entry (page aligned).
    public var bytesPerEntry: Int

    /// `"n/capacity entries, X bytes on disk (file Y bytes)"`.
    public var description: String {
        "\(entryCount)/\(capacity) entries, \(bytesOnDisk) bytes on disk (file \(fileSize) bytes, \(slotsInFile) slots)"
    }
}
