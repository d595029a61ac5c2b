import Foundation
import Synchronization
import Testing
import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// `S3Client`'s retries against the test origin standing in as the store's endpoint (it answers what each
/// test sets; the signing is `S3SignerTests`' and moto's): a `5xx` is sent again with the configured
/// backoff, a `4xx` never, and the retries are bounded. The waits are recorded, not spent.
@Suite("S3 client retries")
struct S3ClientRetryTests {
    static let credentials = S3Credentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret")
    static let slowDown = Array("<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>".utf8)

    /// A client of `origin` whose waits are recorded in `waits` and then run `onWait` instead of sleeping.
    static func client(_ origin: Origin, waits: Waits, retries: Int = 2,
                       onWait: @escaping @Sendable () -> Void = {}) -> S3Client {
        let retry = RetryPolicy(maximumRetries: retries, initialDelay: .milliseconds(100), maximumDelay: .seconds(2)) { delay in
            waits.append(delay)
            onWait()
        }
        return S3Client(configuration: .init(credentials: credentials, endpoint: origin.url("/"), addressing: .path, retry: retry))
    }

    @Test("a 503 SlowDown is sent again after the backoff, and the second answer is the object")
    func retriesAfterSlowDown() async throws {
        try await Origin.with { origin in
            origin.set("/photos/a.jpg", .init(status: 503, body: Self.slowDown))
            let waits = Waits()
            let client = Self.client(origin, waits: waits) {
                origin.set("/photos/a.jpg", .init(body: Array("bytes".utf8), etag: "\"v1\""))
            }
            let result = try await client.get(bucket: "photos", key: "a.jpg", maximumBytes: 1 << 20)
            #expect(result == .object(data: Data("bytes".utf8), etag: "\"v1\"", versionID: nil, contentType: result.contentType))
            #expect(origin.count("/photos/a.jpg") == 2)
            #expect(waits.all == [.milliseconds(100)])
            try await client.shutdown()
        }
    }

    @Test("a store that keeps failing is tried 1 + retries times with growing waits, then fails with its status")
    func boundedRetries() async throws {
        try await Origin.with { origin in
            origin.set("/photos/b.jpg", .init(status: 500, body: Array("<Error><Code>InternalError</Code></Error>".utf8)))
            let waits = Waits()
            let client = Self.client(origin, waits: waits)
            await #expect(throws: S3Error.storeFailed(status: 500, code: "InternalError")) {
                _ = try await client.get(bucket: "photos", key: "b.jpg", maximumBytes: 1 << 20)
            }
            #expect(origin.count("/photos/b.jpg") == 3, "the first try and two retries")
            #expect(waits.all == [.milliseconds(100), .milliseconds(200)])
            try await client.shutdown()
        }
    }

    @Test("a 4xx is never sent again", arguments: [(404, "NoSuchKey"), (403, "AccessDenied"), (400, "InvalidRequest")])
    func clientErrorsAreFinal(status: Int, code: String) async throws {
        try await Origin.with { origin in
            origin.set("/photos/c.jpg", .init(status: status, body: Array("<Error><Code>\(code)</Code></Error>".utf8)))
            let waits = Waits()
            let client = Self.client(origin, waits: waits)
            do {
                _ = try await client.get(bucket: "photos", key: "c.jpg", maximumBytes: 1 << 20)
                Issue.record("a \(status) must fail")
            } catch {
                #expect((error as? S3Error)?.isRetryable == false, "\(error)")
            }
            #expect(origin.count("/photos/c.jpg") == 1)
            #expect(waits.all.isEmpty)
            try await client.shutdown()
        }
    }
}

/// The waits a retry policy asked for, in order.
final class Waits: Sendable {
    private let values = Mutex<[Duration]>([])
    func append(_ delay: Duration) { values.withLock { $0.append(delay) } }
    var all: [Duration] { values.withLock { $0 } }
}

extension S3GetResult {
    /// The object's `Content-Type`, whatever the origin sent.
    var contentType: String? {
        if case .object(_, _, _, let type) = self { return type }
        return nil
    }
}
