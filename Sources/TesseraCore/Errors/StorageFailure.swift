/// Why an image table operation failed.
public enum StorageFailure: Sendable, Equatable, CustomStringConvertible {
    /// The table's file is locked by another process. Tables fail fast instead of waiting; see `ImageTable`.
    case locked(path: String)
    /// This process already has the table open (another `ImageTable`, or an `ImageCache` over the
    /// same directory and format): share that instance instead of opening the file twice.
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
        case .locked(let path): "\(path) is locked by another process"
        case .alreadyOpenInThisProcess(let path): "\(path) is already open in this process (share that ImageTable or ImageCache)"
        case .allEntriesInUse(let format): "every entry of table \(format) is in use by a live image"
        case .invalidFormat(let name, let reason): "invalid image format \(name): \(reason)"
        }
    }
}
