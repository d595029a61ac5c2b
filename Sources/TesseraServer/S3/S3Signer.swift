#if Serving
import Crypto
import Foundation

/// AWS Signature Version 4 for S3 `GET` and `HEAD` requests, in the `Authorization` header.
///
/// A pure value: give it the request (method, URL, the headers to sign) and the time, and it returns
/// the headers to send, the `Authorization` header among them. The same inputs give the same headers,
/// so tests pin it with a fixed date.
///
/// What it signs, as S3 checks it:
/// - **Canonical URI**: the URL's path, each segment percent-decoded once and encoded again with only
///   RFC 3986's unreserved characters (`A–Z a–z 0–9 - . _ ~`) left as they are; `/` between segments
///   stays. S3 encodes the path once (other AWS services encode it twice): build the URL's path with
///   ``encodePath(_:)``, which produces exactly this form, so what is sent is what is signed.
/// - **Canonical query**: each name and value decoded and encoded the same way, sorted by name, then value.
/// - **Signed headers**: `host`, `x-amz-content-sha256`, `x-amz-date`, `x-amz-security-token` (with a
///   session token) and the headers given; names lower-cased and sorted, values trimmed with inner runs of
///   white space made one space.
/// - **Payload**: `UNSIGNED-PAYLOAD` by default (a `GET` or `HEAD` has no body), or the hash given.
/// - **Key**: `HMAC("AWS4" + secret, day)`, then the region, the service and `aws4_request` in turn.
public struct S3Signer: Sendable {
    /// The payload hash that says the body is not signed (`x-amz-content-sha256: UNSIGNED-PAYLOAD`).
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"
    /// SHA-256 of the empty body, the other payload hash a body-less request may sign.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The access key that signs.
    public var credentials: S3Credentials
    /// The region in the credential scope (`us-east-1`); S3-compatible stores usually accept any.
    public var region: String
    /// The service in the credential scope: `s3`.
    public var service: String

    /// A signer for `credentials` in `region` and `service`.
    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send with `method url` at `date`: `headers` (all of them are signed), then `host`,
    /// `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` when the credentials have a session
    /// token, and `authorization`. Send `host` as given here; a `host` in `headers` replaces the one made
    /// from the URL (host, and the port when it is not the scheme's default).
    public func sign(method: String, url: URL, headers: [(name: String, value: String)] = [], date: Date,
                     payloadHash: String = S3Signer.unsignedPayload) -> [(name: String, value: String)] {
        let stamp = Self.timestamp(date)
        var all = headers
        if !all.contains(where: { $0.name.lowercased() == "host" }) { all.append(("host", Self.hostHeader(url))) }
        all.append(("x-amz-date", stamp))
        all.append(("x-amz-content-sha256", payloadHash))
        if let token = credentials.sessionToken { all.append(("x-amz-security-token", token)) }
        let canonical = Self.canonicalHeaders(all)
        let request = canonicalRequest(method: method, url: url, canonicalHeaders: canonical, payloadHash: payloadHash)
        let day = String(stamp.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let toSign = "AWS4-HMAC-SHA256\n\(stamp)\n\(scope)\n\(Self.hex(SHA256.hash(data: Data(request.utf8))))"
        let key = Self.signingKey(secret: credentials.secretAccessKey, day: day, region: region, service: service)
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(toSign.utf8), using: key))
        let signed = canonical.map(\.name).joined(separator: ";")
        all.append(("authorization", "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signed), Signature=\(signature)"))
        return all
    }

    /// The canonical request of `method url` with every header in `headers` signed (give `host`,
    /// `x-amz-date`, `x-amz-content-sha256` among them): what ``sign(method:url:headers:date:payloadHash:)``
    /// hashes, for tests and for debugging a `SignatureDoesNotMatch`.
    public func canonicalRequest(method: String, url: URL, headers: [(name: String, value: String)], payloadHash: String) -> String {
        canonicalRequest(method: method, url: url, canonicalHeaders: Self.canonicalHeaders(headers), payloadHash: payloadHash)
    }

    private func canonicalRequest(method: String, url: URL, canonicalHeaders: [(name: String, value: String)], payloadHash: String) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let lines = canonicalHeaders.map { "\($0.name):\($0.value)\n" }.joined()
        return [method.uppercased(), Self.canonicalURI(components?.percentEncodedPath ?? ""),
                Self.canonicalQuery(components?.percentEncodedQuery), lines,
                canonicalHeaders.map(\.name).joined(separator: ";"), payloadHash].joined(separator: "\n")
    }

    /// The signing key of `secret` on `day` (`YYYYMMDD`, UTC) for `region` and `service`.
    public static func signingKey(secret: String, day: String, region: String, service: String) -> SymmetricKey {
        var key = Array("AWS4\(secret)".utf8)
        for part in [day, region, service, "aws4_request"] { key = hmac(key, part) }
        return SymmetricKey(data: key)
    }

    /// HMAC-SHA256 of `message` (UTF-8) with `key`: one step of the key derivation.
    static func hmac(_ key: [UInt8], _ message: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: SymmetricKey(data: key)))
    }

    /// `value` percent-encoded with everything but RFC 3986's unreserved characters encoded, as UTF-8
    /// bytes in upper-case hex (`a b+c/é` → `a%20b%2Bc%2F%C3%A9`).
    public static func encode(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 15)]))
            }
        }
        return out
    }

    /// An object path (`/bucket/photos/a b+c.jpg`, not encoded) with each segment encoded by ``encode(_:)``
    /// and the `/` between segments kept: the path to send, and the canonical URI S3 signs.
    public static func encodePath(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { encode(String($0)) }.joined(separator: "/")
    }

    /// The canonical URI of a percent-encoded path: each segment decoded once and encoded again, so that an
    /// already canonical path is unchanged (never encoded twice); `/` when the path is empty.
    public static func canonicalURI(_ percentEncodedPath: String) -> String {
        guard !percentEncodedPath.isEmpty else { return "/" }
        return percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false)
            .map { encode(String($0).removingPercentEncoding ?? String($0)) }.joined(separator: "/")
    }

    /// The canonical query of a percent-encoded query (`nil` or empty: empty): each name and value decoded
    /// and encoded again, `name=value` pairs sorted by name then value, joined with `&`.
    public static func canonicalQuery(_ percentEncodedQuery: String?) -> String {
        guard let query = percentEncodedQuery, !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let decode = { (text: String) in encode(text.removingPercentEncoding ?? text) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
        return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// Header names lower-cased and sorted; values trimmed, inner white space made one space, the values of
    /// a name given twice joined with `,`.
    static func canonicalHeaders(_ headers: [(name: String, value: String)]) -> [(name: String, value: String)] {
        var merged: [String: [String]] = [:]
        for (name, value) in headers {
            let trimmed = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }).joined(separator: " ")
            merged[name.lowercased().trimmingCharacters(in: .whitespaces), default: []].append(trimmed)
        }
        return merged.keys.sorted().map { ($0, merged[$0]!.joined(separator: ",")) }
    }

    /// The `Host` header of `url`: its host (an IPv6 address in brackets), with `:port` unless the port is
    /// absent or the scheme's default.
    public static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        let name = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        guard let port = url.port else { return name }
        let scheme = url.scheme?.lowercased()
        return (scheme == "http" && port == 80) || (scheme == "https" && port == 443) ? name : "\(name):\(port)"
    }

    /// `date` as SigV4's basic ISO 8601 time in UTC: `20130524T000000Z`.
    public static func timestamp(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = seconds - days * 86_400
        // Civil date from days since 1970-01-01 (proleptic Gregorian calendar, eras of 400 years).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(year)\(two(month))\(two(day))T\(two(second / 3600))\(two(second / 60 % 60))\(two(second % 60))Z"
    }

    /// Lower-case hex of `bytes`.
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }
}
#endif
