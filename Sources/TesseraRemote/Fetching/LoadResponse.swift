import TesseraImaging
import TesseraTables
import Foundation

/// What a ``DataLoading`` loader returns: the status, the headers that matter for caching, and the body.
public struct LoadResponse: Sendable {
    /// The URL that answered (after redirects).
    public var url: URL
    /// The HTTP status: 2xx, or 304 for a successful revalidation.
    public var statusCode: Int
    /// Response headers with lower-cased names (a repeated header's values joined with `", "`).
    public var headers: [String: String]
    /// The body; empty for `304`.
    public var data: Data

    /// Creates a response.
    public init(url: URL, statusCode: Int, headers: [String: String] = [:], data: Data = Data()) {
        self.url = url
        self.statusCode = statusCode
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
        self.data = data
    }

    /// `true` for `304 Not Modified`: the cached copy is still valid.
    public var isNotModified: Bool { statusCode == 304 }
}
