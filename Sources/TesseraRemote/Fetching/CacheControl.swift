import TesseraImaging
import TesseraTables
import Foundation

/// The directives of a `Cache-Control` response header that ``ImageManager`` honours.
///
/// Unknown directives are ignored; `s-maxage` and `private` do not matter to a private cache. `public`
/// does for one case: a response to a request with its own credentials is stored (and so shared with
/// the manager's other requests) only when it is public (``ImageManager``, "Credentials and caching").
public struct CacheControl: Sendable, Hashable {
    /// `max-age=N`: the response stays fresh for N seconds after it was generated. A value that is not a
    /// number of seconds (`-1`, `abc`, none) counts as 0 — invalid freshness is stale (RFC 9111 §4.2.1);
    /// one beyond 2³¹ counts as 2³¹ (§1.2.2).
    public var maxAge: Int?
    /// `no-cache`: the response may be stored but must be revalidated before every use.
    public var noCache = false
    /// `no-store`: the response must not be stored at all.
    public var noStore = false
    /// `must-revalidate`: once stale, the response must not be used without revalidation (offline
    /// mode still serves it: the caller asked for cached data explicitly).
    public var mustRevalidate = false
    /// `public`: any cache may store the response, even one to a request with credentials.
    public var isPublic = false
    /// `stale-while-revalidate=N` (RFC 5861 §3): for N seconds after the response becomes stale, a cache
    /// may answer with it at once and revalidate it in the background. Read as delta-seconds; an invalid
    /// value leaves the directive out.
    public var staleWhileRevalidate: Int?
    /// `stale-if-error=N` (RFC 5861 §4): for N seconds after the response becomes stale, a cache may
    /// answer with it when revalidating or downloading it fails (no connection, a timeout, a 5xx). Read
    /// as delta-seconds; an invalid value leaves the directive out.
    public var staleIfError: Int?

    /// Parses a header value such as `public, max-age=3600, must-revalidate`.
    public init(parsing header: String?) {
        guard let header else { return }
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pieces.first?.lowercased(), !name.isEmpty else { continue }
            let value = pieces.count > 1 ? pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
            switch name {
            case "max-age": maxAge = value.map { CacheControl.deltaSeconds($0) ?? 0 } ?? 0
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "must-revalidate": mustRevalidate = true
            case "public": isPublic = true
            case "stale-while-revalidate": staleWhileRevalidate = value.flatMap(CacheControl.deltaSeconds)
            case "stale-if-error": staleIfError = value.flatMap(CacheControl.deltaSeconds)
            default: continue
            }
        }
    }

    /// The largest delta-seconds value a cache must handle; larger ones mean this (RFC 9111 §1.2.2).
    public static let maximumDeltaSeconds = 2_147_483_648

    /// Parses delta-seconds (`1*DIGIT`, clamped to ``maximumDeltaSeconds``); `nil` for anything else
    /// (signs, fractions, `inf`, `nan`, empty text).
    public static func deltaSeconds(_ text: String) -> Int? {
        let digits = text.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int(digits).map { min($0, maximumDeltaSeconds) } ?? maximumDeltaSeconds
    }
}
