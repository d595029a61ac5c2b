/// Why an image table operation failed.
public enum StorageFailure: Sendable, Equatable, CustomStringConvertible {
    /// Other processes have the table's file open in a way that excludes this opener: for another
    /// format (its header differs, and they are using it), or 64 of them already share it. See `ImageTable`.
    case locked(path: String)
    /// No longer thrown: a second `ImageTable` on the same file in one process shares it as another
    /// process would. Kept so that code matching it still compiles.
    case alreadyOpenInThisProcess(path: String)
    /// Every slot of the table holds an entry that a live `TableImage` still references, so nothing
    /// can be replaced without changing pixels someone is reading. Release an image and retry.
    case allEntriesInUse(format: String)
    /// The format cannot be stored: an unusable name, a non-positive size or count, or a table that
    /// would not fit in the address space.
    case invalidFormat(name: String, reason: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .locked(let path): "\(path) is in use by other processes for another format (or by 64 of them)"
        case .alreadyOpenInThisProcess(let path): "\(path) is already open in this process (share that ImageTable or ImageCache)"
        case .allEntriesInUse(let format): "every entry of table \(format) is in use by a live image"
        case .invalidFormat(let name, let reason): "invalid image format \(name): \(reason)"
        }
    }
}
