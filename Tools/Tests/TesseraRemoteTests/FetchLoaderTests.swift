import Foundation
import Synchronization
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

@Suite("HTTPDataLoader and ImageManager: typed failures")
struct FetchLoaderTests {
    @Test("server errors are typed with their status; failures are not cached")
    func httpStatus() async throws {
        try await Origin.with { origin in
            origin.set("/boom.png", .init(status: 500, body: Array("oops".utf8)))
            let manager = try makeManager()
            for path in ["/missing.png", "/boom.png"] {
                let url = origin.url(path)
                do {
                    _ = try await manager.image(for: url)
                    Issue.record("\(path) should fail")
                } catch {
                    let code = path == "/boom.png" ? 500 : 404
                    #expect(fetchFailure(error) == .httpStatus(code: code, url: url.absoluteString))
                }
                #expect(manager.isCachedOnDisk(url) == false)
            }
            #expect(manager.statistics.failures == 2)
        }
    }

    @Test("a response slower than the timeout fails with .timeout")
    func timeout() async throws {
        try await Origin.with { origin in
            // The gate is only opened when the origin stops: the response never comes in time.
            origin.set("/never.png", .init(body: try pngBytes(), gate: OriginGate()))
            let manager = try makeManager { $0.requestTimeout = .milliseconds(300) }
            let url = origin.url("/never.png")
            do {
                _ = try await manager.image(for: url)
                Issue.record("should time out")
            } catch {
                #expect(fetchFailure(error) == .timeout(url: url.absoluteString))
            }
        }
    }

    @Test("bodies over the limit fail with .tooLarge: on Content-Length, and while streaming without one")
    func tooLarge() async throws {
        try await Origin.with { origin in
            let body = [UInt8](repeating: 7, count: 50_000)
            origin.set("/big", .init(body: body))
            origin.set("/big-stream", .init(body: body, chunkSize: 4096))
            let loader = HTTPDataLoader.shared
            let declared = origin.url("/big")
            await #expect(throws: TesseraError(.fetching(.tooLarge(bytes: 50_000, limit: 10_000, url: declared.absoluteString)))) {
                _ = try await loader.load(LoadRequest(url: declared, maximumBytes: 10_000), progress: { _ in })
            }
            let streamed = origin.url("/big-stream")
            let seen = ProgressLog()
            do {
                _ = try await loader.load(LoadRequest(url: streamed, maximumBytes: 10_000), progress: { seen.add($0) })
                Issue.record("should be too large")
            } catch {
                guard case .tooLarge(let bytes, let limit, let url)? = fetchFailure(error) else {
                    Issue.record("unexpected \(error)"); return
                }
                #expect(limit == 10_000)
                #expect(bytes > 10_000 && bytes <= 10_000 + 4096)
                #expect(url == streamed.absoluteString)
            }
            // Aborted early: never more than the limit was accepted.
            #expect(seen.all.allSatisfy { $0.receivedBytes <= 10_000 })

            // Through the manager, the configured limit applies.
            let manager = try makeManager { $0.maximumResponseBytes = 10_000 }
            await #expect(throws: TesseraError(.fetching(.tooLarge(bytes: 50_000, limit: 10_000, url: declared.absoluteString)))) {
                _ = try await manager.image(for: declared)
            }
        }
    }

    @Test("redirects are followed up to the limit; a cycle or a longer chain fails with .redirectLimit")
    func redirects() async throws {
        try await Origin.with { origin in
            let png = try pngBytes()
            origin.set("/final.png", .init(body: png))
            origin.set("/r1", .init(redirect: "/final.png"))
            origin.set("/r2", .init(redirect: "/r1"))
            origin.set("/r3", .init(redirect: "/r2"))
            origin.set("/loop", .init(redirect: "/loop"))
            let loader = HTTPDataLoader(configuration: .init(maximumRedirects: 2))
            let ok = try await loader.load(LoadRequest(url: origin.url("/r2")), progress: { _ in })
            #expect(ok.statusCode == 200)
            #expect(ok.data == Data(png))
            #expect(ok.url.path == "/final.png")
            for path in ["/r3", "/loop"] {
                let url = origin.url(path)
                await #expect(throws: TesseraError(.fetching(.redirectLimit(url: url.absoluteString)))) {
                    _ = try await loader.load(LoadRequest(url: url), progress: { _ in })
                }
            }
            try await loader.shutdown()
        }
    }

    @Test("unsupported URLs and refused connections are typed")
    func invalidAndTransport() async throws {
        let loader = HTTPDataLoader.shared
        let ftp = URL(string: "ftp://127.0.0.1/a.png")!
        await #expect(throws: TesseraError(.fetching(.invalidURL(ftp.absoluteString)))) {
            _ = try await loader.load(LoadRequest(url: ftp), progress: { _ in })
        }
        // A port nobody listens on: refused at once (no retries by default), then refused locally
        // (the per-host breaker) without another connection attempt.
        let port = try Origin.unusedPort()
        let url = URL(string: "http://127.0.0.1:\(port)/gone.png")!
        let other = URL(string: "http://127.0.0.1:\(port)/other.png")!
        let impatient = HTTPDataLoader(configuration: .init(refusedHostCooldown: .seconds(600)))
        let refused = await #expect(throws: TesseraError(.fetching(.connectionRefused(url: url.absoluteString, recently: false)))) {
            _ = try await impatient.load(LoadRequest(url: url, timeout: .seconds(10)), progress: { _ in })
        }
        #expect(refused?.underlying != nil, "the transport's own error is kept as a value")
        await #expect(throws: TesseraError(.fetching(.connectionRefused(url: other.absoluteString, recently: true)))) {
            _ = try await impatient.load(LoadRequest(url: other, timeout: .seconds(10)), progress: { _ in })
        }
        try await impatient.shutdown()
        // With the breaker off, the second load tries (and is refused) again.
        let plain = HTTPDataLoader(configuration: .init(refusedHostCooldown: .zero))
        for target in [url, other] {
            await #expect(throws: TesseraError(.fetching(.connectionRefused(url: target.absoluteString, recently: false)))) {
                _ = try await plain.load(LoadRequest(url: target, timeout: .seconds(10)), progress: { _ in })
            }
        }
        try await plain.shutdown()
    }

    @Test("bytes that are not an image give a decoding error and are not written to disk")
    func notAnImage() async throws {
        try await Origin.with { origin in
            origin.set("/page.png", .init(body: Array("<html>not found</html>".utf8)))
            let manager = try makeManager()
            let url = origin.url("/page.png")
            do {
                _ = try await manager.image(for: url)
                Issue.record("should fail")
            } catch let error as TesseraError {
                guard case .decoding = error.reason else { Issue.record("unexpected \(error)"); return }
            }
            #expect(manager.isCachedOnDisk(url) == false)
        }
    }
}

/// Progress reports collected from the loader's task.
final class ProgressLog: Sendable {
    private let reports = Mutex<[LoadProgress]>([])
    func add(_ progress: LoadProgress) { reports.withLock { $0.append(progress) } }
    var all: [LoadProgress] { reports.withLock { $0 } }
}
