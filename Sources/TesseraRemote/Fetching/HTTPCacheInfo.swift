@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The freshness and validators of a cached response, stored next to its bytes in ``DiskCache``.
///
/// Freshness follows RFC 9111 in simplified form: `Cache-Control: max-age` (less the `Age` header)
/// wins over `Expires`; lifetimes are clamped to 0…2³¹ seconds; `no-cache` makes the copy stale at once. A response that says nothing about
/// freshness is fresh for a configurable default (``ImageManager/Configuration/defaultMaxAge``),
/// the usual heuristic of image caches. A stale copy with an `ETag` or `Last-Modified` is revalidated
/// with `If-None-Match`/`If-Modified-Since`; a `304` refreshes it without downloading the body again.
///
/// `stale-while-revalidate` and `stale-if-error` (RFC 5861) are kept with the validators: for that many
/// seconds past ``expiresAt`` a stale copy may be answered at once while it is revalidated in the
/// background (``isUsableWhileRevalidating(at:)``), or answered when the origin fails
/// (``isUsableIfError(at:)``). Entries stored before these fields existed read as having neither.
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
    /// The origin's `stale-while-revalidate`, in seconds past ``expiresAt``; `nil` when it gave none.
    public var staleWhileRevalidate: Int?
    /// The origin's `stale-if-error`, in seconds past ``expiresAt``; `nil` when it gave none.
    public var staleIfError: Int?

    /// Creates cache information.
    public init(url: String, etag: String? = nil, lastModified: String? = nil, storedAt: Date, expiresAt: Date,
                staleWhileRevalidate: Int? = nil, staleIfError: Int? = nil) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
    }

    /// Cache information for `response`, received at `now`; `defaultMaxAge` applies when the response
    /// gives no freshness of its own.
    public init(response: LoadResponse, requestedURL: URL, now: Date, defaultMaxAge: Duration) {
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
            lifetime = defaultMaxAge.timeInterval
        }
        self.init(url: requestedURL.absoluteString, etag: response.headers["etag"],
                  lastModified: response.headers["last-modified"], storedAt: now,
                  expiresAt: now.addingTimeInterval(HTTPCacheInfo.clampedLifetime(lifetime)),
                  staleWhileRevalidate: control.staleWhileRevalidate, staleIfError: control.staleIfError)
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

    /// Whether the copy is stale but within its `stale-while-revalidate` window at `now`: it may be
    /// answered at once while it is revalidated in the background.
    public func isUsableWhileRevalidating(at now: Date) -> Bool {
        guard let seconds = staleWhileRevalidate, !isFresh(at: now) else { return false }
        return now < expiresAt.addingTimeInterval(TimeInterval(seconds))
    }

    /// Whether the copy is stale but within its `stale-if-error` window at `now`: it may be answered
    /// when revalidating or downloading it fails.
    public func isUsableIfError(at now: Date) -> Bool {
        guard let seconds = staleIfError, !isFresh(at: now) else { return false }
        return now < expiresAt.addingTimeInterval(TimeInterval(seconds))
    }

    /// Whether the server can be asked for a `304` instead of the full body.
    public var canRevalidate: Bool { etag != nil || lastModified != nil }

    /// The information after a `304 Not Modified` at `now`: new freshness from the 304's headers,
    /// validators updated when the 304 carries new ones; the stale windows kept when the 304 carries
    /// no `Cache-Control`.
    public func refreshed(by response: LoadResponse, now: Date, defaultMaxAge: Duration) -> HTTPCacheInfo {
        var fresh = HTTPCacheInfo(response: response, requestedURL: URL(string: url) ?? response.url, now: now,
                                  defaultMaxAge: defaultMaxAge)
        fresh.url = url
        fresh.etag = fresh.etag ?? etag
        fresh.lastModified = fresh.lastModified ?? lastModified
        if response.headers["cache-control"] == nil {
            fresh.staleWhileRevalidate = staleWhileRevalidate
            fresh.staleIfError = staleIfError
        }
        return fresh
    }

    /// The validators as a conditional request for `url`: `If-None-Match` with the entity tag when there is
    /// one, else `If-Modified-Since` with the `Last-Modified` date. Never both: a server must ignore
    /// `If-Modified-Since` beside `If-None-Match` (RFC 9110 §13.1.3), and one that does not (moto's S3)
    /// answers `304` for an object replaced within the second of its date, whose new tag the date cannot
    /// tell apart.
    public func conditionalRequest(_ base: LoadRequest) -> LoadRequest {
        var request = base
        request.ifNoneMatch = etag
        request.ifModifiedSince = etag == nil ? lastModified : nil
        return request
    }

    /// Parses an HTTP date in the IMF-fixdate form every current server sends (`Sun, 06 Nov 1994 08:49:37 GMT`,
    /// RFC 9110 §5.6.7); `nil` for anything else (which ``init(response:requestedURL:now:defaultMaxAge:)``
    /// treats as already expired). A fixed-format parser rather than `DateFormatter`: no formatter per
    /// header and no Foundation state that hostile input could make allocate.
    public static func parseHTTPDate(_ text: String) -> Date? {
        let bytes = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 32, bytes[7] == 32, bytes[11] == 32,
              bytes[16] == 32, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"), bytes[25] == 32,
              String(decoding: bytes[26...], as: UTF8.self) == "GMT",
              weekdays.contains(String(decoding: bytes[0..<3], as: UTF8.self)),
              let month = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
              let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
              let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
              (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm, proleptic Gregorian;
        // `month` counts from 0 here, so March is 2).
        let y = month < 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 10) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// `date`, to the second below, as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`): the form
    /// ``parseHTTPDate(_:)`` reads, as a `Date` or `Last-Modified` header carries it.
    public static func formatHTTPDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func digits(_ value: Int32, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        // `tm_wday` counts from Sunday; `weekdays` from Monday.
        return "\(weekdays[(Int(parts.tm_wday) + 6) % 7]), \(digits(parts.tm_mday, 2)) \(months[Int(parts.tm_mon)]) "
            + "\(digits(parts.tm_year + 1900, 4)) \(digits(parts.tm_hour, 2)):\(digits(parts.tm_min, 2)):\(digits(parts.tm_sec, 2)) GMT"
    }

    private static let weekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The decimal value of `digits` (ASCII digits only).
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (48...57).contains(digit) else { return nil }
            value = value * 10 + Int(digit - 48)
        }
        return value
    }
}
