import Foundation

/// Why an `ImageManager` request or a `DataLoading` load failed.
///
/// Cancellation is not a failure: cancelled requests throw `CancellationError`.
public enum FetchFailure: Sendable, Equatable, CustomStringConvertible {
    /// The server answered with a status that is neither a success nor `304 Not Modified`.
    case httpStatus(code: Int, url: String)
    /// No complete response arrived within the configured timeout.
    case timeout(url: String)
    /// The body is larger than the configured maximum: refused on `Content-Length` before any byte of
    /// the body is read, or aborted while streaming once `bytes` exceeded `limit`.
    case tooLarge(bytes: Int, limit: Int, url: String)
    /// More redirects than the configured limit, or a redirect cycle.
    case redirectLimit(url: String)
    /// Offline mode, and nothing is cached for the URL.
    case offlineMiss(url: String)
    /// The URL cannot be loaded (no host, an unsupported scheme, …).
    case invalidURL(String)
    /// The host refused the connection or could not be reached. With `recently` set, no connection was
    /// attempted: the host refused one a moment ago and is not tried again until a short cooldown passes
    /// (`HTTPDataLoader.Configuration.refusedHostCooldown`).
    case connectionRefused(url: String, recently: Bool)
    /// The connection failed; `message` is the transport's own text.
    case transport(url: String, message: String)
    /// The server answered `401 Unauthorized` twice: to the request as first authorized, and again after
    /// the manager's `RequestAuthorizing` hook refreshed the credentials (the request is retried once).
    case unauthorized(url: String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .httpStatus(let code, let url): "HTTP \(code) from \(url)"
        case .timeout(let url): "timed out loading \(url)"
        case .tooLarge(let bytes, let limit, let url): "\(url): body of \(bytes) bytes exceeds the limit of \(limit) bytes"
        case .redirectLimit(let url): "too many redirects (or a redirect cycle) from \(url)"
        case .offlineMiss(let url): "offline and \(url) is not cached"
        case .invalidURL(let url): "invalid URL \(url)"
        case .connectionRefused(let url, false): "connection refused loading \(url)"
        case .connectionRefused(let url, true): "connection refused loading \(url) (its host refused moments ago; not tried again yet)"
        case .transport(let url, let message): "\(url): \(message)"
        case .unauthorized(let url): "HTTP 401 from \(url), also after refreshing the credentials"
        }
    }
}
