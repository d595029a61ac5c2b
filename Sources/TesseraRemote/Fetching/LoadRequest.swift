import TesseraImaging
import TesseraTables
import Foundation

/// What ``ImageManager`` asks a ``DataLoading`` loader for: a URL, the limits that apply, and the
/// validators of a cached copy when the request is a revalidation.
public struct LoadRequest: Sendable, Hashable {
    /// The URL to load.
    public var url: URL
    /// The whole load (connection, redirects, head and body) must finish within this time.
    public var timeout: Duration
    /// The largest body accepted, in bytes.
    public var maximumBytes: Int
    /// The `ETag` of the cached copy, sent as `If-None-Match`.
    public var ifNoneMatch: String?
    /// The `Last-Modified` of the cached copy, sent as `If-Modified-Since`.
    public var ifModifiedSince: String?
    /// Extra request headers (``ImageRequest/headers``).
    public var headers: [String: String]

    /// Creates a request.
    public init(url: URL, timeout: Duration = .seconds(30), maximumBytes: Int = 64 << 20,
                ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, headers: [String: String] = [:]) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maximumBytes = maximumBytes
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }

    /// Whether the request carries validators, so that the server may answer `304 Not Modified`.
    public var isConditional: Bool { ifNoneMatch != nil || ifModifiedSince != nil }
}
