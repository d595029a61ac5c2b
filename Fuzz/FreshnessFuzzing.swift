import Foundation

/// The HTTP freshness parsers under fuzzing: the input is a block of response header lines
/// (`name: value`, one per line), parsed by ``CacheControl`` and ``HTTPCacheInfo``.
///
/// Invariants (traps otherwise): nothing crashes; the information stored is fresh from `now` for a
/// finite time that is never negative (`no-cache`: none at all), within 2³¹ seconds (RFC 9111 §1.2.2);
/// it can always be written to the disk cache and reads back equal; a revalidation by the same headers
/// keeps the URL and validators.
enum FreshnessFuzzing {
    static let url = URL(string: "http://127.0.0.1:8080/fresh.png")!
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func headers(from input: UnsafeRawBufferPointer) -> [String: String] {
        var headers: [String: String] = [:]
        for line in String(decoding: input, as: UTF8.self).split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            headers[name] = String(line[line.index(after: colon)...])
        }
        return headers
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        let response = LoadResponse(url: url, statusCode: 200, headers: headers(from: input))
        let control = CacheControl(parsing: response.headers["cache-control"])
        precondition(control.maxAge.map { $0 >= 0 } ?? true, "negative max-age \(control)")
        _ = HTTPCacheInfo.isStorable(response)
        for value in response.headers.values { _ = HTTPCacheInfo.parseHTTPDate(value) }
        let info = HTTPCacheInfo(response: response, requestedURL: url, now: now, defaultMaxAge: .seconds(3600))
        let lifetime = info.expiresAt.timeIntervalSince(now)
        precondition(info.storedAt == now && lifetime.isFinite && lifetime >= 0 && lifetime <= 2_147_483_648,
                     "freshness out of range: \(lifetime) s for \(response.headers)")
        if control.noCache { precondition(lifetime == 0, "no-cache yet fresh") }
        let file: Data
        do { file = try DiskCacheFile.encode(Data([1, 2, 3]), info: info) } catch { preconditionFailure("cannot store \(info): \(error)") }
        guard let back = DiskCacheFile.decode(file) else { preconditionFailure("stored information does not read back: \(info)") }
        precondition(back.info == info && back.data == Data([1, 2, 3]), "stored information changed: \(info) → \(back.info)")
        let refreshed = info.refreshed(by: LoadResponse(url: url, statusCode: 304, headers: response.headers), now: now, defaultMaxAge: .seconds(60))
        precondition(refreshed.url == info.url && refreshed.etag == info.etag && refreshed.lastModified == info.lastModified,
                     "revalidation lost validators")
    }
}
