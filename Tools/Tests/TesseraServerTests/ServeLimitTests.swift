import Foundation
import Testing
import Tessera
@testable import TesseraServer
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// The image service's bounds in process, on a real Hummingbird server on 127.0.0.1: source sizes, the
/// work limit and its queue, request and download deadlines, and identical requests sharing one job.
@Suite("tessera serve limits, in process")
struct ServeLimitTests {
    @Test func sourceLimitsAreEnforced() async throws {
        let fixture = try ServeFixture()
        try ServeFixture.jpeg(width: 1000, height: 1000).write(to: fixture.root.appendingPathComponent("big.jpg"))
        let bytes = try #require(try FileManager.default.attributesOfItem(atPath: fixture.root.appendingPathComponent("big.jpg").path)[.size] as? Int)
        let configuration = fixture.configuration {
            $0.limits.maximumSourceBytes = bytes - 1
            $0.limits.maximumSourcePixels = 500_000
        }
        try await fixture.withServer(configuration) { port, server in
            let tooBig = try await RawHTTP.get(port: port, "/v1/thumb/big.jpg")
            #expect(tooBig.status == 413)
            #expect(tooBig.text.contains("source_too_large"))
            let tooBigResize = try await RawHTTP.get(port: port, "/v1/resize?src=big.jpg&w=10&h=10")
            #expect(tooBigResize.status == 413)
            // 1000x1000 in fewer bytes than the limit but more pixels.
            try ServeFixture.jpeg(width: 1000, height: 1000).prefix(bytes - 2).write(to: fixture.root.appendingPathComponent("wide.jpg"))
            let tooManyPixels = try await RawHTTP.get(port: port, "/v1/thumb/wide.jpg")
            #expect(tooManyPixels.status == 413)
            #expect(tooManyPixels.text.contains("source_too_many_pixels"))
            let resizePixels = try await RawHTTP.get(port: port, "/v1/resize?src=wide.jpg&w=10&h=10")
            #expect(resizePixels.status == 413)
            let broken = try await RawHTTP.get(port: port, "/v1/thumb/broken.jpg")
            #expect(broken.status == 415)
            #expect(server.service.statistics.decodes == 0)
            #expect(try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg").status == 200)
        }
    }

    @Test func theWorkLimitRefusesBeyondItsQueueWith503() async throws {
        // One decode at a time and no queue: while one runs, another is refused at once with 503.
        let limit = ParallelismLimit(width: 1, queueLimit: 0)
        let (holding, held) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await limit.runAsync {
                held.yield()
                for await _ in released { break }
                return 7
            }
        }
        for await _ in holding { break }
        #expect(limit.running == 1)
        let refusal = await #expect(throws: ParallelismLimit.QueueFull.self) { try await limit.run { 0 } }
        let error = ServiceError.from(try #require(refusal))
        #expect(error.status == .serviceUnavailable)
        #expect(error.code == .tooManyDecodes)
        release.yield()
        #expect(try await first.value == 7)
        #expect(limit.running == 0)
        #expect(try await limit.run { 42 } == 42)
    }

    @Test func requestTimeAndDownloadTimeAreBoundedApart() async throws {
        let fixture = try ServeFixture()
        let origin = try await Origin.start()
        let gate = OriginGate()
        origin.set("/stuck.jpg", .init(body: Array(try ServeFixture.jpeg(width: 80, height: 60)), gate: gate))
        defer { gate.open() }
        let stuck = "/v1/resize?src=\(origin.url("/stuck.jpg").absoluteString)&w=40&h=30"
        // The request's limit first: 504 timeout, while the download may go on.
        let requestBound = fixture.configuration {
            $0.limits.requestTimeoutSeconds = 0.2
            $0.remote.allowedHosts = ["127.0.0.1"]
            $0.remote.allowedAddressRanges = ["127.0.0.1/32"]
        }
        try await fixture.withServer(requestBound) { port, _ in
            let response = try await RawHTTP.get(port: port, stuck)
            #expect(response.status == 504)
            #expect(response.text.contains("\"timeout\""))
            #expect(try await RawHTTP.get(port: port, "/healthz").status == 200)
        }
        // The download's own limit first: 504 upstream_timeout.
        let downloadBound = fixture.configuration {
            $0.limits.downloadTimeoutSeconds = 0.2
            $0.remote.allowedHosts = ["127.0.0.1"]
            $0.remote.allowedAddressRanges = ["127.0.0.1/32"]
        }
        try await fixture.withServer(downloadBound) { port, _ in
            let response = try await RawHTTP.get(port: port, stuck)
            #expect(response.status == 504)
            #expect(response.text.contains("\"upstream_timeout\""))
        }
    }

    /// Fifty identical requests at once make one job: one answer says `produced`, the other 49 joined it
    /// and say `coalesced`, and the outcome counter agrees. The test holds the one decode permit until all
    /// fifty wait for the job, so that they overlap for certain.
    @Test func fiftyConcurrentIdenticalRequestsDecodeOnce() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.limits.maximumConcurrentDecodes = 1 }) { port, server in
            let service = server.service
            let targets: [(String, ImageService.RequestInfo)] = [
                ("/v1/thumb/photo.jpg", .init(route: .preset(name: "thumb", path: "photo.jpg"), path: "/v1/thumb/photo.jpg",
                                              rawQuery: nil, accept: nil, ifNoneMatch: nil)),
                ("/v1/resize?src=sub/tall.jpg&w=33&h=44&mode=fill",
                 .init(route: .resize, path: "/v1/resize", rawQuery: "src=sub/tall.jpg&w=33&h=44&mode=fill", accept: nil, ifNoneMatch: nil)),
            ]
            for (target, info) in targets {
                let key = try service.resolve(info, trustingRecentCheck: false).key
                let before = service.statistics
                let (holding, held) = AsyncStream<Void>.makeStream()
                let (released, release) = AsyncStream<Void>.makeStream()
                let permit = Task {
                    try await service.work.runAsync {
                        held.yield()
                        for await _ in released { break }
                    }
                }
                for await _ in holding { break }
                let requests = Task {
                    try await withThrowingTaskGroup(of: RawHTTP.Response.self) { group in
                        for _ in 0..<50 { group.addTask { try await RawHTTP.get(port: port, target) } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                while service.jobs.waiterCount(for: key) < 50 { await Task.yield() }
                release.yield()
                try await permit.value
                let responses = try await requests.value
                #expect(responses.count == 50)
                #expect(responses.allSatisfy { $0.status == 200 })
                #expect(Set(responses.map(\.body)).count == 1)
                let outcomes = responses.map { $0.headers["x-tessera-cache"] ?? "" }
                #expect(outcomes.filter { $0 == "produced" }.count == 1, "\(target): \(outcomes)")
                #expect(outcomes.filter { $0 == "coalesced" }.count == 49, "\(target): \(outcomes)")
                let after = service.statistics
                #expect(after.decodes - before.decodes == 1, "\(target)")
                #expect(after.encodes - before.encodes == 1, "\(target)")
                #expect(after.memoryHits == before.memoryHits, "\(target)")
            }
            let metrics = try await RawHTTP.get(port: port, "/metrics")
            #expect(metrics.text.contains("tessera_serve_cache_outcomes_total{outcome=\"coalesced\"} 98\n"))
            #expect(metrics.text.contains("tessera_serve_cache_outcomes_total{outcome=\"produced\"} 2\n"))
            #expect(metrics.text.contains("tessera_serve_cache_outcomes_total{outcome=\"memory\"} 0\n"))
        }
    }
}
