#if Serving
import Foundation

/// Why an ``S3Client`` request failed.
///
/// What `tessera serve` answers its own client with, for each (`ServiceError`'s mapping, the one place
/// where a store's failure becomes a status and a code):
///
/// | Case | Status and code | Why |
/// |---|---|---|
/// | ``noSuchKey(bucket:key:)``, ``noSuchBucket(bucket:)`` | 404 `not_found` | the image is not there |
/// | ``accessDenied(bucket:key:)``, ``signatureDoesNotMatch``, ``invalidAccessKeyID``, ``invalidToken(code:)`` | 502 `source_denied` | the server's credentials or policy are wrong: the client can do nothing about it |
/// | ``tooLarge(bytes:limit:)`` | 413 `source_too_large` | the object is over the byte limit |
/// | ``storeFailed(status:code:)`` | 502 `upstream_status` | the store answered 5xx (`SlowDown` and `ServiceUnavailable` included) after the retries |
/// | ``unexpectedResponse(status:code:)`` | 502 `upstream_failed` | another answer (a wrong region's `PermanentRedirect`, a 400) |
/// | ``timeout`` | 504 `upstream_timeout` | no connection, head or body within the timeouts |
/// | ``transport(_:)`` | 502 `upstream_failed` | the connection failed (refused, reset, TLS) |
/// | ``invalidRequest(_:)`` | 400 `bad_path` | the bucket or key cannot be addressed |
/// | ``keyTooLong(bytes:limit:)`` | 400 `bad_path` | the key is longer than S3 allows: the client asked for it, never the store |
/// | ``cancelled`` | 503 `cancelled` | the task was cancelled (its client went away) |
///
/// S3 answers 403 `AccessDenied`, not 404, for a missing key when the credentials may not list the
/// bucket (`s3:ListBucket`); grant it if missing images should be 404s.
public enum S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// `NoSuchKey`: no object under this key (also a `HEAD` answered 404, which has no body to tell a
    /// missing bucket from a missing key).
    case noSuchKey(bucket: String, key: String)
    /// `NoSuchBucket`: the bucket does not exist.
    case noSuchBucket(bucket: String)
    /// `AccessDenied` (403): the credentials may not read this object.
    case accessDenied(bucket: String, key: String)
    /// `SignatureDoesNotMatch` (403): the secret access key is wrong (or a proxy changed the request).
    case signatureDoesNotMatch
    /// `InvalidAccessKeyId` (403): the store does not know the access key id.
    case invalidAccessKeyID
    /// The session token was refused: `InvalidToken`, `ExpiredToken`, `TokenRefreshRequired`.
    case invalidToken(code: String)
    /// The object has more bytes than the limit: its `Content-Length`, checked before the body is read,
    /// or the bytes received when the limit was passed while streaming a body without one.
    case tooLarge(bytes: Int, limit: Int)
    /// The store answered 5xx, with the error `code` of its XML body when it had one.
    case storeFailed(status: Int, code: String?)
    /// An answer not covered above (a 3xx or 4xx), with its error code when the body had one.
    case unexpectedResponse(status: Int, code: String?)
    /// The connect or read timeout, or the request's deadline, passed.
    case timeout
    /// The connection failed before an answer (refused, reset, TLS); the underlying error's text.
    case transport(String)
    /// The request could not be made: an empty key, a bucket name a virtual-hosted URL cannot carry.
    case invalidRequest(String)
    /// The key (prefix included) has more UTF-8 bytes than S3 accepts (``S3Client/Configuration/maximumKeyBytes``,
    /// 1,024): refused before any request, since the store would answer `400 KeyTooLongError`.
    case keyTooLong(bytes: Int, limit: Int)
    /// The calling task was cancelled.
    case cancelled

    /// Whether the same request may succeed when sent again: the store answered `5xx` (``storeFailed(status:code:)``:
    /// an internal error, throttling, unavailable) or the connection broke (``transport(_:)``). A `4xx` would be
    /// answered the same, a timeout has already waited its bound, a cancelled request is not wanted.
    public var isRetryable: Bool {
        switch self {
        case .storeFailed, .transport: true
        default: false
        }
    }

    /// Whether the store refused the credentials or their permissions (a configuration error of the server).
    public var isCredentialsError: Bool {
        switch self {
        case .accessDenied, .signatureDoesNotMatch, .invalidAccessKeyID, .invalidToken: true
        default: false
        }
    }

    /// A sentence for logs (never a credential).
    public var description: String {
        switch self {
        case .noSuchKey(let bucket, let key): "S3: no object \(key) in bucket \(bucket)"
        case .noSuchBucket(let bucket): "S3: no bucket \(bucket)"
        case .accessDenied(let bucket, let key): "S3: access denied to \(key) in bucket \(bucket)"
        case .signatureDoesNotMatch: "S3: the signature does not match (wrong secret access key?)"
        case .invalidAccessKeyID: "S3: the store does not know the access key id"
        case .invalidToken(let code): "S3: the session token was refused (\(code))"
        case .tooLarge(let bytes, let limit): "S3: the object has \(bytes) bytes, more than the limit of \(limit)"
        case .storeFailed(let status, let code): "S3: the store failed with \(status)\(code.map { " \($0)" } ?? "")"
        case .unexpectedResponse(let status, let code): "S3: unexpected answer \(status)\(code.map { " \($0)" } ?? "")"
        case .timeout: "S3: timed out"
        case .transport(let message): "S3: connection failed: \(message)"
        case .invalidRequest(let message): "S3: invalid request: \(message)"
        case .keyTooLong(let bytes, let limit): "S3: the object key has \(bytes) bytes, more than the limit of \(limit)"
        case .cancelled: "S3: cancelled"
        }
    }

    /// The error for an answer with `status` (not 2xx or 304) and the error `code` of its body, for
    /// `key` in `bucket`.
    static func from(status: Int, code: String?, bucket: String, key: String) -> S3Error {
        switch code {
        case "NoSuchKey": return .noSuchKey(bucket: bucket, key: key)
        case "NoSuchBucket": return .noSuchBucket(bucket: bucket)
        case "AccessDenied": return .accessDenied(bucket: bucket, key: key)
        case "SignatureDoesNotMatch": return .signatureDoesNotMatch
        case "InvalidAccessKeyId": return .invalidAccessKeyID
        case "InvalidToken", "ExpiredToken", "TokenRefreshRequired": return .invalidToken(code: code!)
        default: break
        }
        switch status {
        case 404 where code == nil: return .noSuchKey(bucket: bucket, key: key)
        case 403 where code == nil: return .accessDenied(bucket: bucket, key: key)
        case 500...599: return .storeFailed(status: status, code: code)
        default: return .unexpectedResponse(status: status, code: code)
        }
    }

    /// The text of the first `<Code>` element of an S3 XML error body (`<Error><Code>NoSuchKey</Code>…`),
    /// when it is a plain name of at most 64 letters and digits; callers read at most
    /// ``S3Error/errorBodyLimit`` bytes of the body.
    static func errorCode(inBody body: [UInt8]) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let open = text.range(of: "<Code>"), let close = text.range(of: "</Code>", range: open.upperBound..<text.endIndex) else {
            return nil
        }
        let code = text[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        guard !code.isEmpty, code.count <= 64, code.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return code
    }

    /// How many bytes of an error body are read to find its code.
    static let errorBodyLimit = 16 * 1024
}
#endif
