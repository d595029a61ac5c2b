import Foundation
import Synchronization
import Testing
@_spi(Internal) import TesseraRemote
import Tessera
import TesseraTesting
import TesseraTestSupport

/// `ImageManager.imageTask(for:)`: a handle that is cancelled, reprioritised and observed, and whose
/// response says where the image came from.
@Suite("ImageTask: handles and responses")
struct ImageTaskTests {
    static func url(_ name: String) -> URL { URL(string: "https://images.example/\(name).png")! }

    /// A manager on `loader` with one urgent slot, so that a gated download holds the urgent lane.
    static func manager(_ loader: MockDataLoader, disk: URL? = nil, slots: Int = 1) throws -> ImageManager {
        var configuration = ImageManager.Configuration(disk: disk.map { DiskCache.Configuration(directory: $0) },
                                                       diskSweepInterval: nil, maximumConcurrentDownloads: slots)
        configuration.defaultMaxAge = .seconds(3600)
        return try ImageManager(configuration: configuration, loader: loader)
    }

    /// A loader whose `name` answers a PNG behind a closed gate, and a manager on it.
    static func gated(_ name: String) throws -> (MockDataLoader, LoadGate, URL, ImageManager) {
        let loader = MockDataLoader()
        let gate = LoadGate()
        let url = Self.url(name)
        loader.set(.image(try pngBytes(), gate: gate), for: url)
        return (loader, gate, url, try Self.manager(loader))
    }

    @Test("a response says network, then memory, then (in a new manager on the same disk) disk, with the HTTP status, headers and source format")
    func responsesSayWhereTheyCameFrom() async throws {
        let loader = MockDataLoader()
        let url = Self.url("a")
        loader.set(.image(try pngBytes(), cacheControl: "max-age=600", etag: "\"v1\""), for: url)
        let directory = try temporaryDirectory("task-response")
        let manager = try Self.manager(loader, disk: directory)
        let request = ImageRequest(url: url, size: PixelSize(width: 16, height: 12))

        let first = try await manager.imageTask(for: request).response
        #expect(first.cacheType == .network)
        #expect(first.statusCode == 200 && first.headers["etag"] == "\"v1\"" && first.url == url)
        #expect(first.sourceFormat == .png)
        #expect(first.image.layout.size == PixelSize(width: 16, height: 12))

        let second = try await manager.imageTask(for: request).response
        #expect(second.cacheType == .memory && second.statusCode == nil && second.headers.isEmpty)

        let reopened = try Self.manager(loader, disk: directory)
        let third = try await reopened.imageTask(for: request).response
        #expect(third.cacheType == .disk && third.sourceFormat == .png && third.statusCode == nil)
        #expect(loader.count(for: url) == 1)
        // The simple form answers the same image.
        #expect(try await reopened.image(for: request).layout.size == PixelSize(width: 16, height: 12))
    }

    @Test("cancel() ends the response with .cancelled and stops the download nobody else needs")
    func cancel() async throws {
        let (loader, _, url, manager) = try Self.gated("slow")
        let task = manager.imageTask(for: ImageRequest(url: url))
        await loader.waitForLoads(of: url)
        task.cancel()
        #expect(task.isCancelled)
        await #expect(throws: TesseraError(.cancelled)) { _ = try await task.response }
        await manager.waitForQueue { $0.isIdle }
        #expect(manager.statistics.cancelledRequests == 1)
    }

    @Test("cancelling the task that awaits the response cancels the request")
    func cancellingTheAwaiter() async throws {
        let (loader, _, url, manager) = try Self.gated("awaited")
        let task = manager.imageTask(for: ImageRequest(url: url))
        let awaiter = Task { try await task.response }
        await loader.waitForLoads(of: url)
        awaiter.cancel()
        await #expect(throws: TesseraError(.cancelled)) { _ = try await awaiter.value }
        await #expect(throws: TesseraError(.cancelled)) { _ = try await task.response }
    }

    @Test("levels order the urgent queue, low levels wait in the slow lane, and a changed priority moves a download without a second load")
    func priorities() async throws {
        let (loader, gate, blocker, manager) = try Self.gated("blocker")
        let names = ["normal", "low", "high", "veryHigh", "veryLow"]
        for name in names { loader.set(.image(try pngBytes()), for: Self.url(name)) }
        let holding = manager.imageTask(for: ImageRequest(url: blocker))
        await loader.waitForLoads(of: blocker)

        let levels: [String: FetchPriority] = ["normal": .normal, "low": .low, "high": .high, "veryHigh": .veryHigh, "veryLow": .veryLow]
        var tasks: [String: ImageTask] = [:]
        for name in names { tasks[name] = manager.imageTask(for: ImageRequest(url: Self.url(name), priority: levels[name]!)) }
        await manager.waitForQueue { $0.urgentQueued.count == 3 && $0.slowQueued.count == 2 }
        var snapshot = await manager.queueSnapshot()
        #expect(snapshot.urgentQueued == ["veryHigh", "high", "normal"].map(Self.url))
        #expect(snapshot.slowQueued == ["low", "veryLow"].map(Self.url))

        // Promoted from the slow lane to the front of the urgent one; the high one demoted to the slow lane.
        tasks["veryLow"]!.priority = .veryHigh
        tasks["high"]!.priority = .low
        #expect(tasks["veryLow"]!.priority == .veryHigh)
        await manager.waitForQueue { $0.urgentQueued.count == 3 }
        snapshot = await manager.queueSnapshot()
        #expect(snapshot.urgentQueued == ["veryHigh", "veryLow", "normal"].map(Self.url))
        // Demoted to the front of its level (the most recently wanted), behind nothing of a higher level.
        #expect(snapshot.slowQueued == ["high", "low"].map(Self.url))

        gate.open()
        _ = try await holding.response
        for task in tasks.values { _ = try await task.response }
        for name in names + ["blocker"] { #expect(loader.count(for: Self.url(name)) == 1, "\(name)") }
    }

    @Test("a download shared by two tasks takes the higher level; demote(_:) lowers a task to low")
    func sharedDownloadsTakeTheHighestLevel() async throws {
        let (loader, gate, blocker, manager) = try Self.gated("blocker")
        let shared = Self.url("shared")
        loader.set(.image(try pngBytes()), for: shared)
        let holding = manager.imageTask(for: ImageRequest(url: blocker))
        await loader.waitForLoads(of: blocker)

        let low = manager.imageTask(for: ImageRequest(url: shared, size: PixelSize(width: 8, height: 8), priority: .veryLow))
        await manager.waitForQueue { $0.slowQueued == [shared] }
        let high = manager.imageTask(for: ImageRequest(url: shared, priority: .high))
        await manager.waitForQueue { $0.urgentQueued == [shared] && $0.slowQueued.isEmpty }
        await manager.demote(shared)
        #expect(high.priority == .low && low.priority == .veryLow)
        await manager.waitForQueue { $0.slowQueued == [shared] && $0.urgentQueued.isEmpty }

        gate.open()
        _ = try await holding.response
        _ = try await (low.response, high.response)
        #expect(loader.count(for: shared) == 1)
    }

    @Test("progress and events arrive in order, the events end with finished, and a late sequence sees only the end")
    func progressAndEvents() async throws {
        let loader = MockDataLoader()
        let gate = LoadGate()
        let url = Self.url("chunked")
        let body = try pngBytes()
        var response = MockDataLoader.Response.image(body, gate: gate)
        response.chunks = 4
        loader.set(response, for: url)
        let manager = try Self.manager(loader, slots: 4)
        let task = manager.imageTask(for: ImageRequest(url: url))
        let events = task.events
        let progress = task.progress
        await loader.waitForLoads(of: url)
        task.priority = .high
        gate.open()

        var seen: [String] = []
        var last: ImageResponse?
        for await event in events {
            switch event {
            case .progress(let report): seen.append("progress \(report.receivedBytes)")
            case .priorityChanged(let level): seen.append("priority \(level)")
            case .finished(let result): seen.append("finished"); last = try result.get()
            case .refreshed: seen.append("refreshed")
            }
        }
        let quarters = (1...4).map { "progress \(body.count * $0 / 4)" }
        #expect(seen == ["priority high"] + quarters + ["finished"])
        #expect(last?.cacheType == .network)
        var reports: [Int] = []
        for await report in progress { reports.append(report.receivedBytes) }
        #expect(reports == (1...4).map { body.count * $0 / 4 })

        var late: [String] = []
        for await event in task.events { if case .finished = event { late.append("finished") } else { late.append("other") } }
        #expect(late == ["finished"])
        var lateProgress = 0
        for await _ in task.progress { lateProgress += 1 }
        #expect(lateProgress == 0)
    }

    @Test("FetchPriority: five ordered levels; urgent and prefetch are normal and low; old names decode")
    func levels() throws {
        #expect(FetchPriority.allCases == [.veryLow, .low, .normal, .high, .veryHigh])
        #expect(FetchPriority.urgent == .normal && FetchPriority.prefetch == .low)
        #expect(FetchPriority.allCases.filter(\.isUrgent) == [.normal, .high, .veryHigh])
        #expect(FetchPriority.veryLow < .low && FetchPriority.high < .veryHigh)
        let decoded = try JSONDecoder().decode([FetchPriority].self, from: Data(#"["urgent","prefetch","veryHigh"]"#.utf8))
        #expect(decoded == [.normal, .low, .veryHigh])
        #expect(ImageRequest(url: Self.url("x")).priority == .normal)
    }
}
