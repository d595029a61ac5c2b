import Foundation

/// The freshness and validators of a cached response, stored next to its bytes in ``DiskCache``.
///
/// Freshness follows RFC 9111 in simplified form: `Cache-Control: max-age` (less the `Age` header)
/// wins over `Expires`; lifetimes are clamped to 0…2³¹ seconds; `no-cache` makes the copy stale at once. A response that says nothing about
/// freshness is fresh for a configurable default (``ImageManager/Configuration/defaultMaxAge``),
/// the usual heuristic of image caches. A stale copy with an `ETag` or `Last-Modified` is revalidated
/// with `If-None-Match`/`If-Modified-Since`; a `304` refreshes it without downloading the body again.
public struct HTTPCacheInfo: Sendable, Hashable, Codable {
    /// The URL the bytes were requested from (checked on read against hash collisions and stray files).
    public var url: String
    /// The `ETag` validator.
    public var etag: String?
    /// The `Last-Modified` validator, verbatim.
    public var lastModified: String?
    /// When the bytes were downloaded or last revalidated.
    public var storedAt: Date
    /// When the copy becomes stale.
    public var expiresAt: Date

    /// Creates cache information.
    public init(url: String, etag: String? = nil, lastModified: String? = nil, storedAt: Date, expiresAt: Date) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }

    /// Cache information for `response`, received at `now`; `defaultMaxAge` applies when the response
    /// gives no freshness of its own.
    public init(response: LoadResponse, requestedURL: URL, now: Date, defaultMaxAge: TimeInterval) {
        let control = CacheControl(parsing: response.headers["cache-control"])
        // Age is delta-seconds: `Double("-inf")` once made a copy fresh forever (and unstorable).
        let age = response.headers["age"].flatMap(CacheControl.deltaSeconds).map(Double.init) ?? 0
        let lifetime: TimeInterval
        if control.noCache {
            lifetime = 0
        } else if let maxAge = control.maxAge {
            lifetime = Double(maxAge) - age
        } else if let expires = response.headers["expires"] {
            // An unparsable Expires (such as "0") means "already expired".
            let date = HTTPCacheInfo.parseHTTPDate(expires)
            let served = response.headers["date"].flatMap(HTTPCacheInfo.parseHTTPDate) ?? now
            lifetime = date.map { $0.timeIntervalSince(served) } ?? 0
        } else {
            lifetime = defaultMaxAge
        }
        self.init(url: requestedURL.absoluteString, etag: response.headers["etag"],
                  lastModified: response.headers["last-modified"], storedAt: now,
                  expiresAt: now.addingTimeInterval(HTTPCacheInfo.clampedLifetime(lifetime)))
    }

    /// `lifetime` within 0…2³¹ seconds (``CacheControl/maximumDeltaSeconds``); `nan` counts as 0.
    static func clampedLifetime(_ lifetime: TimeInterval) -> TimeInterval {
        guard lifetime > 0 else { return 0 }
        return min(lifetime, TimeInterval(CacheControl.maximumDeltaSeconds))
    }

    /// Whether the response may be written to disk at all (`Cache-Control: no-store` says no).
    public static func isStorable(_ response: LoadResponse) -> Bool {
        !CacheControl(parsing: response.headers["cache-control"]).noStore
    }

    /// Whether the copy may be used without asking the server.
    public func isFresh(at now: Date) -> Bool { now < expiresAt }

    /// Whether the server can be asked for a `304` instead of the full body.
    public var canRevalidate: Bool { etag != nil || lastModified != nil }

    /// The information after a `304 Not Modified` at `now`: new freshness from the 304's headers,
    /// validators updated when the 304 carries new ones.
    public func refreshed(by response: LoadResponse, now: Date, defaultMaxAge: TimeInterval) -> HTTPCacheInfo {
        var fresh = HTTPCacheInfo(response: response, requestedURL: URL(string: url) ?? response.url, now: now,
                                  defaultMaxAge: defaultMaxAge)
        fresh.url = url
        fresh.etag = fresh.etag ?? etag
        fresh.lastModified = fresh.lastModified ?? lastModified
        return fresh
    }

    /// The validators as a conditional request for `url`.
    public func conditionalRequest(_ base: LoadRequest) -> LoadRequest {
        var request = base
        request.ifNoneMatch = etag
        request.ifModifiedSince = lastModified
        return request
    }

    /// Parses an HTTP date (IMF-fixdate, such as `Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
