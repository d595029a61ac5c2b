import Foundation

/// The directives of a `Cache-Control` response header that ``ImageManager`` honours.
///
/// Unknown directives are ignored; `s-maxage`, `private` and `public` do not matter to a private cache.
public struct CacheControl: Sendable, Hashable {
    /// `max-age=N`: the response stays fresh for N seconds after it was generated.
    public var maxAge: Int?
    /// `no-cache`: the response may be stored but must be revalidated before every use.
    public var noCache = false
    /// `no-store`: the response must not be stored at all.
    public var noStore = false
    /// `must-revalidate`: once stale, the response must not be used without revalidation (offline
    /// mode still serves it: the caller asked for cached data explicitly).
    public var mustRevalidate = false

    /// Parses a header value such as `public, max-age=3600, must-revalidate`.
    public init(parsing header: String?) {
        guard let header else { return }
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let name = pieces.first?.lowercased(), !name.isEmpty else { continue }
            let value = pieces.count > 1 ? pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : nil
            switch name {
            case "max-age": maxAge = value.flatMap { Int($0) }.map { max(0, $0) }
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "must-revalidate": mustRevalidate = true
            default: continue
            }
        }
    }
}
