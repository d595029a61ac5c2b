#if Serving
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// What ``S3Client/get(bucket:key:ifNoneMatch:maximumBytes:)`` returns.
public enum S3GetResult: Sendable, Hashable {
    /// The object: its bytes, its `ETag` as sent (quotes included, ready for `If-None-Match`), its version
    /// id on a versioned bucket, and its `Content-Type`.
    case object(data: Data, etag: String?, versionID: String?, contentType: String?)
    /// `304 Not Modified`: the object still has the `ETag` given as `ifNoneMatch` (this one).
    case notModified(etag: String)
}

/// What ``S3Client/head(bucket:key:)`` returns: an object's metadata.
public struct S3ObjectInfo: Sendable, Hashable {
    /// The `ETag`, quotes included.
    public var etag: String?
    /// The size in bytes (`Content-Length`).
    public var contentLength: Int?
    /// The `Content-Type`.
    public var contentType: String?
    /// The version id (`x-amz-version-id`) on a versioned bucket.
    public var versionID: String?
    /// `Last-Modified`, as sent (an HTTP date).
    public var lastModified: String?
}

/// A small S3 client for reading objects: `GET` (conditional, size-limited) and `HEAD`, signed with
/// ``S3Signer``, on its own AsyncHTTPClient `HTTPClient` (plain HTTP and HTTPS, the shared event loop group).
///
/// Works with AWS and S3-compatible stores (MinIO, Ceph, moto) through ``Configuration``. Every failure is an
/// ``S3Error``; its documentation says which HTTP status a server should answer with for each. Call
/// ``shutdown()`` when done (dropping the client without does so in the background).
public final class S3Client: Sendable {
    /// The endpoint, region, addressing, credentials and timeouts.
    public let configuration: Configuration
    private let signer: S3Signer
    private let client: HTTPClient

    /// A client with `configuration`.
    public init(configuration: Configuration) {
        self.configuration = configuration
        signer = S3Signer(credentials: configuration.credentials, region: configuration.region)
        var settings = HTTPClient.Configuration()
        settings.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(configuration.connectTimeout),
                                                            read: TimeAmount(configuration.readTimeout))
        // A redirect would be followed unsigned for another host; S3's redirects (a wrong region) are errors here.
        settings.redirectConfiguration = .disallow
        settings.decompression = .disabled
        // A refused connection fails at once (a 502) instead of being retried until the request's deadline.
        settings.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: settings)
    }

    deinit {
        // The shutdown callback keeps the client alive until it has closed its connections.
        client.shutdown { _ in }
    }

    /// Closes the client's connections. Requests after this fail.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Reads `key` in `bucket`.
    ///
    /// With `ifNoneMatch` (an `ETag` from an earlier answer), an unchanged object answers
    /// ``S3GetResult/notModified(etag:)`` without its bytes. An object over `maximumBytes` fails with
    /// ``S3Error/tooLarge(bytes:limit:)``: from its `Content-Length` before any of the body is read, or,
    /// without one, as soon as the bytes received pass the limit.
    public func get(bucket: String, key: String, ifNoneMatch: String? = nil, maximumBytes: Int) async throws(S3Error) -> S3GetResult {
        let url = try configuration.url(bucket: bucket, key: key)
        let headers = ifNoneMatch.map { [(name: "if-none-match", value: $0)] } ?? []
        return try await retrying { () async throws(S3Error) -> S3GetResult in try await Self.typed {
            let response = try await self.send(.GET, url, headers)
            let status = Int(response.status.code)
            let etag = response.headers.first(name: "etag")
            if status == 304 { return .notModified(etag: etag ?? ifNoneMatch ?? "") }
            guard status == 200 else { throw try await Self.failure(response, bucket: bucket, key: key) }
            if let length = response.headers.first(name: "content-length").flatMap(Int.init), length > maximumBytes {
                throw S3Error.tooLarge(bytes: length, limit: maximumBytes)
            }
            var body = Data()
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= maximumBytes else {
                    throw S3Error.tooLarge(bytes: body.count + chunk.readableBytes, limit: maximumBytes)
                }
                chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
            }
            return .object(data: body, etag: etag, versionID: response.headers.first(name: "x-amz-version-id"),
                           contentType: response.headers.first(name: "content-type"))
        } }
    }

    /// The metadata of `key` in `bucket`, without its bytes. A `HEAD` answer has no body, so a missing
    /// bucket fails as ``S3Error/noSuchKey(bucket:key:)`` too, and every 403 as
    /// ``S3Error/accessDenied(bucket:key:)``.
    public func head(bucket: String, key: String) async throws(S3Error) -> S3ObjectInfo {
        let url = try configuration.url(bucket: bucket, key: key)
        return try await retrying { () async throws(S3Error) -> S3ObjectInfo in try await Self.typed {
            let response = try await self.send(.HEAD, url, [])
            guard response.status.code == 200 else { throw try await Self.failure(response, bucket: bucket, key: key) }
            let headers = response.headers
            return S3ObjectInfo(etag: headers.first(name: "etag"), contentLength: headers.first(name: "content-length").flatMap(Int.init),
                                contentType: headers.first(name: "content-type"), versionID: headers.first(name: "x-amz-version-id"),
                                lastModified: headers.first(name: "last-modified"))
        } }
    }

    /// Runs `request` again after a retryable failure (``S3Error/isRetryable``), as ``Configuration/retry``
    /// allows: each try is signed afresh (a new date), the waits grow exponentially.
    private func retrying<T: Sendable>(_ request: () async throws(S3Error) -> T) async throws(S3Error) -> T {
        try await configuration.retry.run(request, retryingIf: \.isRetryable, cancelled: { .cancelled })
    }

    /// Signs and sends one request; returns once the answer's head has arrived.
    private func send(_ method: HTTPMethod, _ url: URL, _ headers: [(name: String, value: String)]) async throws -> HTTPClientResponse {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in signer.sign(method: method.rawValue, url: url, headers: headers, date: Date()) {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        return try await client.execute(request, deadline: .now() + TimeAmount(configuration.requestTimeout))
    }

    /// The error of an answer that is neither 200 nor 304: its status and the `<Code>` of the first
    /// ``S3Error/errorBodyLimit`` bytes of its body.
    private static func failure(_ response: HTTPClientResponse, bucket: String, key: String) async throws -> S3Error {
        var body: [UInt8] = []
        for try await chunk in response.body {
            body += chunk.readableBytesView.prefix(S3Error.errorBodyLimit - body.count)
            if body.count >= S3Error.errorBodyLimit { break }
        }
        return S3Error.from(status: Int(response.status.code), code: S3Error.errorCode(inBody: body), bucket: bucket, key: key)
    }

    /// Runs `work` and turns what it throws into an ``S3Error``.
    private static func typed<T: Sendable>(_ work: () async throws -> T) async throws(S3Error) -> T {
        do {
            return try await work()
        } catch let error as S3Error {
            throw error
        } catch {
            throw map(error)
        }
    }

    /// AsyncHTTPClient's and NIO's errors as ``S3Error``s.
    static func map(_ error: any Error) -> S3Error {
        if error is CancellationError || Task.isCancelled { return .cancelled }
        if let client = error as? HTTPClientError {
            switch client {
            case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout: return .timeout
            case .cancelled: return .cancelled
            default: break
            }
        }
        return .transport("\(error)")
    }
}
#endif
