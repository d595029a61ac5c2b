/// Why an image table operation failed.
public enum StorageFailure: Sendable, Equatable, CustomStringConvertible {
    /// The table's directory or file is locked by another process.
    case locked(path: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .locked(let path): "\(path) is locked by another process"
        }
    }
}
