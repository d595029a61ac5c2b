/// Why an `ImageCache` request failed.
public enum CacheFailure: Sendable, Equatable, CustomStringConvertible {
    /// No format with this name was configured.
    case unknownFormat(String)
    /// Two configured formats have the same name.
    case duplicateFormat(String)
    /// An `ImageCache` was given a request for a URL; it serves entity requests (`ImageManager`
    /// serves URLs).
    case notAnEntityRequest(url: String)
    /// The entity gave no source URL for the format.
    case noSourceURL(entityID: String, format: String)
    /// The provider could not supply the source image; `message` is its error.
    case sourceUnavailable(url: String, message: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unknownFormat(let name): "no image format named \(name)"
        case .duplicateFormat(let name): "more than one image format is named \(name)"
        case .notAnEntityRequest(let url): "\(url) is a URL request; ImageCache serves entity requests (ImageManager serves URLs)"
        case .noSourceURL(let id, let format): "entity \(id) has no source URL for format \(format)"
        case .sourceUnavailable(let url, let message): "source image \(url) unavailable: \(message)"
        }
    }
}
