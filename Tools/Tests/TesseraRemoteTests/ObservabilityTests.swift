import Foundation
import Logging
import MetricsTestKit
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// Logs and metrics of the library, read through a capturing log handler and swift-metrics' test
/// backend, each injected through the configuration (no global bootstrap).
@Suite("Observability: metrics and logs of tables, the image cache and the image manager")
struct ObservabilityTests {
    @Test("a table counts 5 hits and 3 misses, one store and its time, labelled with the format; hits arrive in batches")
    func tableCounts() throws {
        let metrics = TestMetrics()
        let log = CapturedLog()
        let table = try ImageTable(format: icon, directory: try temporaryDirectory("observe-table"),
                                   observability: Observability(logger: log.logger, metricsFactory: metrics))
        let stored = UUID()
        try table.store(entityID: stored, sourceID: UUID()) { $0.clear() }
        let logged = log.all.count
        let format = [("format", "icon")]
        func hits() -> Int64 { metrics.counterTotal(label: "tessera_image_table_hits_total", dimensions: format) }
        for _ in 0..<5 { #expect(table.image(for: stored) != nil) }
        #expect(hits() == 0, "hits wait under the lock for a miss, a store or a full batch")
        for _ in 0..<3 { #expect(table.image(for: UUID()) == nil) }
        #expect(metrics.counterTotal(label: "tessera_image_table_misses_total", dimensions: format) == 3)
        #expect(hits() == 5)
        #expect(metrics.counterTotal(label: "tessera_image_table_stores_total", dimensions: format) == 1)
        #expect(try metrics.expectTimer("tessera_image_table_store_seconds", format).values.count == 1)
        #expect(log.all.count == logged, "hits and misses log nothing")

        // A full batch is handed over without a miss; the rest waits for the next miss or store.
        for _ in 0..<(TableMetrics.hitBatch + 10) { _ = table.image(for: stored) }
        #expect(hits() == 5 + Int64(TableMetrics.hitBatch))
        try table.store(entityID: UUID(), sourceID: UUID()) { $0.clear() }
        #expect(hits() == 5 + Int64(TableMetrics.hitBatch) + 10)
    }

    @Test("an eviction is counted and logged at debug; a damaged entry is logged as an error")
    func evictionAndDamage() throws {
        let metrics = TestMetrics()
        let log = CapturedLog()
        let tiny = ImageFormat(name: "tiny", family: "t", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: 2)
        let table = try ImageTable(format: tiny, directory: try temporaryDirectory("observe-evict"),
                                   observability: Observability(logger: log.logger, metricsFactory: metrics))
        let ids = (0..<3).map { _ in UUID() }
        for id in ids { try table.store(entityID: id, sourceID: UUID()) { $0.clear() } }
        #expect(metrics.counterTotal(label: "tessera_image_table_evictions_total", dimensions: [("format", "tiny")]) == 1)
        #expect(log.messages(at: .debug).contains { $0.contains("evicted") })

        // Damage a committed entry's pixels behind the table's back, then open the table again.
        let damaged = try temporaryDirectory("observe-damage")
        let id = UUID()
        do {
            let first = try ImageTable(format: tiny, directory: damaged)
            try first.store(entityID: id, sourceID: UUID()) { $0.clear() }
        }
        let path = damaged.appendingPathComponent("tiny.tesseratable").path
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(tiny.headerBytes))
        handle.write(Data([0xFF]))
        try handle.close()
        let reopened = try ImageTable(format: tiny, directory: damaged,
                                      observability: Observability(logger: log.logger, metricsFactory: metrics))
        #expect(reopened.image(for: id) == nil)
        #expect(log.messages(at: .error).contains { $0.contains("pixel checksum") })
    }

    @Test("an image cache times its decode and draw; its tables count the miss before the fill, the hit after, another miss")
    func imageCacheTimers() async throws {
        let metrics = TestMetrics()
        let dir = try temporaryDirectory("observe-cache")
        let file = dir.appendingPathComponent("red.png")
        try Data(try solidPNG(Color(red: 1, green: 0, blue: 0))).write(to: file)
        let configuration = ImageCache.Configuration(observability: Observability(metricsFactory: metrics))
        let cache = try ImageCache(formats: [medium], directory: dir.appendingPathComponent("tables"),
                                   provider: FileSourceImageProvider(), configuration: configuration)
        let user = User("ann", url: file)
        _ = try await cache.image(for: user, format: medium)
        #expect(cache.cachedImage(for: user, format: medium) != nil)
        #expect(try metrics.expectTimer("tessera_image_cache_decode_seconds").values.count == 1)
        #expect(try metrics.expectTimer("tessera_image_cache_draw_seconds").values.count == 1)
        let format = [("format", "medium")]
        #expect(cache.cachedImage(for: User("bob", url: file), format: medium) == nil)   // a miss hands over the hit
        #expect(metrics.counterTotal(label: "tessera_image_table_misses_total", dimensions: format) == 2)
        #expect(metrics.counterTotal(label: "tessera_image_table_hits_total", dimensions: format) == 1)
    }

    @Test("a download counts 1 download and its bytes; memory and disk misses, then a memory hit; logs carry the URL")
    func managerCounts() async throws {
        try await Origin.with { origin in
            let body = try pngBytes()
            origin.set("/observed.png", .init(body: body))
            let metrics = TestMetrics()
            let log = CapturedLog()
            let manager = try makeManager {
                $0.observability = Observability(logger: log.logger, metricsFactory: metrics)
            }
            let url = origin.url("/observed.png")
            _ = try await manager.image(for: url)
            _ = try await manager.image(for: url)
            #expect(origin.count("/observed.png") == 1)
            #expect(metrics.counterTotal(label: "tessera_remote_downloads_total") == 1)
            #expect(metrics.counterTotal(label: "tessera_remote_download_bytes_total") == Int64(body.count))
            #expect(metrics.counterTotal(label: "tessera_remote_memory_misses_total") == 1)
            #expect(metrics.counterTotal(label: "tessera_remote_memory_hits_total") == 1)
            #expect(metrics.counterTotal(label: "tessera_remote_disk_misses_total") == 1)
            #expect(metrics.counterTotal(label: "tessera_remote_disk_hits_total") == 0)
            #expect(try metrics.expectTimer("tessera_remote_download_seconds").values.count == 1)
            #expect(try metrics.expectTimer("tessera_remote_decode_seconds").values.count == 1)
            let finished = log.all.filter { $0.message == "download finished" }
            #expect(finished.count == 1)
            #expect(finished.first?.metadata["url"] == url.absoluteString)
            #expect(finished.first?.metadata["status"] == "200")
            #expect(finished.first?.metadata["bytes"] == "\(body.count)")

            origin.set("/gone.png", .init(status: 404))
            _ = try? await manager.image(for: origin.url("/gone.png"))
            #expect(metrics.counterTotal(label: "tessera_remote_download_failures_total") == 1)
            #expect(log.all.contains { $0.level == .info && $0.message == "download failed" && $0.metadata["url"] == origin.url("/gone.png").absoluteString })
        }
    }

    @Test("configurations that differ only in where they report compare equal")
    func equalityIgnoresObservability() {
        let quiet = ImageManager.Configuration()
        var loud = ImageManager.Configuration()
        loud.observability = Observability(logger: CapturedLog().logger, metricsFactory: TestMetrics())
        #expect(quiet == loud)
        #expect(quiet.hashValue == loud.hashValue)
        var other = loud
        other.headers = ["X-Api-Key": "k"]
        #expect(other != loud)
        #expect(ImageCache.Configuration(maximumConcurrentFills: 2) == ImageCache.Configuration(maximumConcurrentFills: 2, observability: loud.observability))
    }
}
