#if Serving
import Foundation
import Tessera

/// Where a bucket's objects are: an S3 endpoint, its region and addressing, and the credentials that
/// sign the requests (with ``S3Signer``). A bucket's timeouts, size limit and retries are those of the
/// fetch chain that reads it: `tessera serve` reads a bucket through an `ImageManager` of its own.
public struct S3Endpoint: Sendable {
    /// How a bucket appears in an object's URL.
    public enum Addressing: Sendable, Hashable {
        /// `ENDPOINT/BUCKET/KEY`: works with any endpoint, an IP address included (MinIO, moto, Ceph).
        case path
        /// `https://BUCKET.ENDPOINT-HOST/KEY`: AWS's default. The bucket must be a DNS label sequence
        /// (`a–z 0–9 - .`, 3 to 63 characters) and the endpoint a host name, not an IP address; with `https`,
        /// a bucket with dots does not match AWS's wildcard certificate, so use ``path`` for those.
        case virtualHost
    }

    /// The store's base URL: `https://s3.REGION.amazonaws.com` by default, or an S3-compatible store's
    /// (`http://127.0.0.1:9000`). A path in it (`https://host/storage`) is kept before the bucket.
    public var endpoint: URL
    /// The region the requests are signed for (`us-east-1` by default).
    public var region: String
    /// Path-style or virtual-hosted addressing.
    public var addressing: Addressing
    /// The access key that signs every request.
    public var credentials: S3Credentials
    /// An endpoint. Without `endpoint`, AWS's endpoint for `region`, and then virtual-hosted addressing
    /// unless `addressing` says otherwise; with an `endpoint`, path-style addressing unless it says otherwise.
    public init(credentials: S3Credentials, region: String = "us-east-1", endpoint: URL? = nil, addressing: Addressing? = nil) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint ?? Self.awsEndpoint(region: region)
        self.addressing = addressing ?? (endpoint == nil ? .virtualHost : .path)
    }

    /// The most UTF-8 bytes an object key may have: S3's limit (and that of the stores compatible with
    /// it). A longer key is refused by ``url(bucket:key:)`` without asking the store.
    public static let maximumKeyBytes = 1024

    /// AWS's S3 endpoint for `region`: `https://s3.REGION.amazonaws.com`.
    public static func awsEndpoint(region: String) -> URL {
        URL(string: "https://s3.\(region).amazonaws.com")!
    }

    /// The URL of `key` in `bucket` under this configuration's endpoint and addressing, its path
    /// encoded as ``S3Signer/encodePath(_:)`` does (`photos/a b+c.jpg` → `photos/a%20b%2Bc.jpg`).
    /// Throws ``S3Error/invalidRequest(_:)`` for an empty bucket or key, and for virtual-hosted addressing
    /// with a bucket that is not a DNS name or an endpoint that is an IP address; throws
    /// ``S3Error/keyTooLong(bytes:limit:)`` for a key over ``maximumKeyBytes``.
    public func url(bucket: String, key: String) throws(S3Error) -> URL {
        guard !bucket.isEmpty, !bucket.contains("/") else { throw .invalidRequest("bucket name \"\(bucket)\" is empty or has a /") }
        guard !key.isEmpty else { throw .invalidRequest("the object key is empty") }
        let keyBytes = key.utf8.count
        guard keyBytes <= Self.maximumKeyBytes else { throw .keyTooLong(bytes: keyBytes, limit: Self.maximumKeyBytes) }
        guard let scheme = endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = endpoint.host, !host.isEmpty else {
            throw .invalidRequest("endpoint \(endpoint.absoluteString) is not an http(s) URL with a host")
        }
        let base = URLComponents(url: endpoint, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? ""
        let prefix = base.hasSuffix("/") ? String(base.dropLast()) : base
        let port = endpoint.port.map { ":\($0)" } ?? ""
        let address: String
        switch addressing {
        case .path:
            let name = host.contains(":") ? "[\(host)]" : host
            address = "\(scheme)://\(name)\(port)\(prefix)/\(S3Signer.encode(bucket))/\(S3Signer.encodePath(key))"
        case .virtualHost:
            guard Self.isDNSCompatible(bucket) else {
                throw .invalidRequest("bucket \"\(bucket)\" cannot be a host name: use path-style addressing")
            }
            guard !Self.isAddressLiteral(host) else {
                throw .invalidRequest("endpoint \(host) is an IP address: use path-style addressing")
            }
            address = "\(scheme)://\(bucket).\(host)\(port)\(prefix)/\(S3Signer.encodePath(key))"
        }
        guard let url = URL(string: address) else { throw .invalidRequest("cannot make a URL of \(address)") }
        return url
    }

    /// Whether `bucket` can be the first label of a host name: 3 to 63 of `a–z 0–9 - .`, starting and
    /// ending with a letter or digit, no empty label.
    static func isDNSCompatible(_ bucket: String) -> Bool {
        let bytes = Array(bucket.utf8)
        guard (3...63).contains(bytes.count), !bucket.contains("..") else { return false }
        let alphanumeric = { (byte: UInt8) in (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard alphanumeric(bytes.first!), alphanumeric(bytes.last!) else { return false }
        return bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isAddressLiteral(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".", omittingEmptySubsequences: false).count == 4
            && host.split(separator: ".").allSatisfy { UInt8($0) != nil })
    }
}
#endif
