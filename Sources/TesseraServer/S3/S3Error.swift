#if Serving
import Foundation

/// Why an object of a bucket cannot be addressed (``S3Endpoint/url(bucket:key:)``): refused before any
/// request is made. `tessera serve` answers both with `400 bad_path`. What the store itself answers
/// (a missing key, refused credentials, its own failures) comes back through the fetch chain as the
/// status it sent (docs/SERVING.md, "Sources", lists the service's code for each).
public enum S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bucket or key cannot be put into a URL under the endpoint and its addressing.
    case invalidRequest(String)
    /// The key has more UTF-8 bytes than S3 allows (``S3Endpoint/maximumKeyBytes``): the client asked
    /// for it, never the store.
    case keyTooLong(bytes: Int, limit: Int)

    /// A line for logs and error bodies.
    public var description: String {
        switch self {
        case .invalidRequest(let message): "S3: invalid request: \(message)"
        case .keyTooLong(let bytes, let limit): "S3: the object key has \(bytes) bytes, more than the limit of \(limit)"
        }
    }
}
#endif
