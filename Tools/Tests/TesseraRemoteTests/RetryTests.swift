import Foundation
import Synchronization
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// Retries with exponential backoff: after a 5xx or a refused connection, as often as the policy says,
/// never after a 4xx. The waits go through the policy's `sleep`, which these tests record instead of
/// spending.
@Suite("Retry with backoff")
struct RetryTests {
    /// Records the waits asked for and returns at once.
    final class Waits: Sendable {
        private let waits = Mutex<[Duration]>([])
        var all: [Duration] { waits.withLock { $0 } }
        func policy(retries: Int) -> RetryPolicy {
            RetryPolicy(maximumRetries: retries, initialDelay: .milliseconds(100), multiplier: 3, maximumDelay: .milliseconds(500),
                        sleep: { [self] delay in waits.withLock { $0.append(delay) } })
        }
    }

    @Test("an origin answering 503 twice and then 200 is retried after growing waits, and the image arrives")
    func serviceUnavailableThenOK() async throws {
        let png = try pngBytes()
        let served = Mutex(0)
        let origin = try await Origin.start(generator: { path in
            guard path == "/flaky.png" else { return nil }
            let attempt = served.withLock { count -> Int in count += 1; return count }
            return attempt <= 2 ? Origin.Resource(status: 503) : Origin.Resource(body: png)
        })
        defer { origin.openGates() }
        let waits = Waits()
        let manager = try makeManager(disk: false) { $0.retry = waits.policy(retries: 3) }
        let response = try await manager.imageTask(for: ImageRequest(url: origin.url("/flaky.png"))).response
        #expect(response.cacheType == .network && response.statusCode == 200)
        #expect(origin.count("/flaky.png") == 3)
        #expect(waits.all == [.milliseconds(100), .milliseconds(300)])
        #expect(manager.statistics.retries == 2 && manager.statistics.downloads == 3)
    }

    @Test("a 4xx is never retried, and without a policy nothing is")
    func clientErrorsAreFinal() async throws {
        try await Origin.with { origin in
            origin.set("/missing.png", .init(status: 404))
            origin.set("/down.png", .init(status: 503))
            let waits = Waits()
            let retrying = try makeManager(disk: false) { $0.retry = waits.policy(retries: 3) }
            await #expect(throws: TesseraError(.fetching(.httpStatus(code: 404, url: origin.url("/missing.png").absoluteString)))) {
                _ = try await retrying.image(for: origin.url("/missing.png"))
            }
            #expect(origin.count("/missing.png") == 1 && waits.all.isEmpty)

            let plain = try makeManager(disk: false)
            #expect(plain.configuration.retry == .none)
            await #expect(throws: TesseraError(.fetching(.httpStatus(code: 503, url: origin.url("/down.png").absoluteString)))) {
                _ = try await plain.image(for: origin.url("/down.png"))
            }
            #expect(origin.count("/down.png") == 1)
            // With retries, the last 503 is what the caller gets, after the allowed tries.
            await #expect(throws: TesseraError(.fetching(.httpStatus(code: 503, url: origin.url("/down.png").absoluteString)))) {
                _ = try await retrying.image(for: origin.url("/down.png"))
            }
            #expect(origin.count("/down.png") == 5)
            #expect(waits.all == [.milliseconds(100), .milliseconds(300), .milliseconds(500)])
        }
    }

    @Test("a refused connection on a closed loopback port is tried again, as often as allowed")
    func refusedConnection() async throws {
        let closed = try ClosedPort()   // held to the end, so that no server of a parallel test takes the port
        let url = URL(string: "http://127.0.0.1:\(closed.port)/nobody.png")!
        // The loader's own breaker is off, so that each retry reaches the port.
        let loader = RecordingLoader(HTTPDataLoader(configuration: .init(refusedHostCooldown: .zero)))
        let waits = Waits()
        let manager = try makeManager(disk: false, loader: loader) { $0.retry = waits.policy(retries: 2) }
        await #expect(throws: TesseraError(.fetching(.connectionRefused(url: url.absoluteString, recently: false)))) {
            _ = try await manager.image(for: url)
        }
        #expect(loader.loads.count == 3)
        #expect(waits.all == [.milliseconds(100), .milliseconds(300)])
        withExtendedLifetime(closed) {}
    }

    @Test("which failures are retried")
    func retryable() {
        func fetching(_ failure: FetchFailure) -> TesseraError { TesseraError(.fetching(failure)) }
        #expect(RetryPolicy.isRetryable(fetching(.httpStatus(code: 500, url: "u"))))
        #expect(RetryPolicy.isRetryable(fetching(.httpStatus(code: 599, url: "u"))))
        #expect(!RetryPolicy.isRetryable(fetching(.httpStatus(code: 429, url: "u"))))
        #expect(RetryPolicy.isRetryable(fetching(.timeout(url: "u"))))
        #expect(RetryPolicy.isRetryable(fetching(.connectionRefused(url: "u", recently: false))))
        #expect(!RetryPolicy.isRetryable(fetching(.connectionRefused(url: "u", recently: true))))
        #expect(!RetryPolicy.isRetryable(fetching(.tooLarge(bytes: 2, limit: 1, url: "u"))))
        #expect(!RetryPolicy.isRetryable(CancellationError()))
        #expect(RetryPolicy.standard.delay(beforeRetry: 1) == .milliseconds(500))
        #expect(RetryPolicy.standard.delay(beforeRetry: 2) == .seconds(1))
        #expect(RetryPolicy(maximumRetries: 9).delay(beforeRetry: 9) == .seconds(10))
    }
}
