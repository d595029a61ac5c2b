@_spi(Internal) import TesseraImaging

/// The `Authorization` header value a protected ``Origin/Resource`` accepts, changeable while the origin
/// runs: tests rotate it (a new token) or expire it (nothing accepted) between requests.
public final class OriginCredential: Sendable {
    private let value: LockedValue<String?>

    /// Accepts exactly `accepted` (for example `"Bearer t1"`); `nil` accepts nothing.
    public init(accepting accepted: String?) {
        value = LockedValue(accepted)
    }

    /// The value accepted now, or `nil` when nothing is.
    public var accepted: String? { value.withLock { $0 } }

    /// Accepts `accepted` from now on instead (`nil`: nothing, an expired token).
    public func rotate(to accepted: String?) { value.withLock { $0 = accepted } }

    /// Whether a request with this `Authorization` header (or none) is let through.
    func admits(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        return value.withLock { $0 == authorization }
    }
}
