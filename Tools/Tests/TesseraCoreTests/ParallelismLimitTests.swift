import Foundation
import Synchronization
import Testing
@_spi(Internal) @testable import TesseraImaging
@_spi(Internal) @testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// Counts how many decodes run at once (without blocking: Swift Testing runs other suites on the same
/// few cooperative threads, so a test that waited for decodes to gather could starve).
final class OverlapProbe: Sendable {
    private let state = Mutex((running: 0, peak: 0, total: 0))

    var peak: Int { state.withLock { $0.peak } }
    var total: Int { state.withLock { $0.total } }

    func enter() {
        state.withLock { s in
            s.running += 1
            s.total += 1
            s.peak = max(s.peak, s.running)
        }
    }

    func leave() { state.withLock { $0.running -= 1 } }
}

/// A real codec that reports each decode to an ``OverlapProbe``.
struct ProbedDecoder: ImageDecoding {
    let base: any ImageDecoding
    let probe: OverlapProbe
    var format: ImageFileFormat { base.format }
    func probe(_ data: UnsafeRawBufferPointer) throws(TesseraError) -> ImageInfo { try base.probe(data) }
    func decodedSize(for info: ImageInfo, atLeast target: PixelSize?) -> PixelSize { base.decodedSize(for: info, atLeast: target) }
    func supportsDirectDecode(to style: PixelStyle) -> Bool { base.supportsDirectDecode(to: style) }
    func decode(_ data: UnsafeRawBufferPointer, info: ImageInfo, into target: MutableBitmapView) throws(TesseraError) -> DecodeIntegrity {
        probe.enter()
        defer { probe.leave() }
        return try base.decode(data, info: info, into: target)
    }
}

func probedDecoder(_ probe: OverlapProbe) -> ImageDecoder {
    ImageDecoder(decoders: ImageDecoder.standardDecoders(limits: .default).map { ProbedDecoder(base: $0, probe: probe) })
}

/// Serves a distinct PNG per URL, encoded.
struct PNGProvider: SourceImageProviding {
    func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        .encoded(Data(try solidPNG(Color(red: 0, green: Double(url.lastPathComponent.count % 7) / 7, blue: 1))))
    }
    func cancelSourceImage(at url: URL) {}
    func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { false }
}

/// Answers every URL with a PNG, without a network.
struct PNGLoader: DataLoading {
    func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        LoadResponse(url: request.url, statusCode: 200, data: Data(try pngBytes(width: 80, height: 60)))
    }
}

@Suite("bounded parallelism: ParallelismLimit, ImageCache fills, ImageManager decodes")
struct ParallelismLimitTests {
    /// 12 bodies through a limit of 3: at most 3 run at once (checked inside the bodies), all run, and
    /// permits are all returned; a body's error reaches its caller and returns its permit too.
    @Test("ParallelismLimit runs at most width bodies at once and returns every permit")
    func limit() async throws {
        let limit = ParallelismLimit(width: 3)
        let seen = LockedValue((now: 0, peak: 0, done: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try await limit.run {
                        seen.withLock { $0.now += 1; $0.peak = max($0.peak, $0.now) }
                        defer { seen.withLock { $0.now -= 1; $0.done += 1 } }
                        #expect(limit.running <= 3)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(seen.withLock { $0.peak } <= 3 && seen.withLock { $0.done } == 12)
        #expect(limit.running == 0)
        struct Boom: Error {}
        await #expect(throws: Boom.self) { try await limit.run { throw Boom() } }
        #expect(limit.running == 0)
        let order = LockedValue([Int]())
        await ParallelismLimit(width: 2).forEach(Array(0..<9)) { index, value in order.withLock { $0.append(value * 10 + index % 10) } }
        #expect(order.withLock { $0 }.sorted() == (0..<9).map { $0 * 10 + $0 })
    }

    /// A cancelled waiter leaves the queue with CancellationError and never runs; the holder's permit
    /// then goes to nobody (running returns to 0).
    @Test("a waiter cancelled while queued never runs")
    func cancelledWaiter() async throws {
        let limit = ParallelismLimit(width: 1)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let holder = Task.detached { try await limit.run { entered.signal(); release.wait() } }
        entered.wait()
        let ran = LockedValue(false)
        let waiter = Task { try await limit.run { ran.withLock { $0 = true } } }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        release.signal()
        try await holder.value
        #expect(!ran.withLock { $0 } && limit.running == 0)
    }

    /// Six entities with six source URLs: with `maximumConcurrentFills: N` no more than N decodes ever
    /// run at once (N = 1: strictly one after another); all six are decoded once and stored.
    @Test("ImageCache fills decode in parallel up to maximumConcurrentFills", arguments: [1, 2])
    func cacheFills(width: Int) async throws {
        let probe = OverlapProbe()
        let format = ImageFormat(name: "thumb", style: .bgra32, size: PixelSize(width: 40, height: 30), maximumCount: 10)
        let cache = try ImageCache(formats: [format], directory: try temporaryDirectory("fills"), provider: PNGProvider(),
                                   decoder: probedDecoder(probe), configuration: .init(maximumConcurrentFills: width))
        #expect(cache.configuration.maximumConcurrentFills == width)
        let users = (0..<6).map { User("u\($0)", url: URL(string: "https://example.invalid/\(String(repeating: "a", count: $0))")!) }
        try await withThrowingTaskGroup(of: TableImage.self) { group in
            for user in users { group.addTask { try await cache.image(for: user, format: format) } }
            var count = 0
            for try await image in group { count += 1; #expect(image.layout.size == format.size) }
            #expect(count == 6)
        }
        #expect(probe.peak >= 1 && probe.peak <= width && probe.total == 6)
    }

    /// Six URLs through an ImageManager with `maximumConcurrentDecodes: N` (6 downloads at once): no
    /// more than N decodes ever run at once; all six arrive at their size. The defaults of both
    /// configurations are the core count.
    @Test("ImageManager decodes run in parallel up to maximumConcurrentDecodes", arguments: [1, 2])
    func managerDecodes(width: Int) async throws {
        #expect(ImageManager.Configuration().maximumConcurrentDecodes == ProcessInfo.processInfo.activeProcessorCount)
        #expect(ImageCache.Configuration().maximumConcurrentFills == ProcessInfo.processInfo.activeProcessorCount)
        let probe = OverlapProbe()
        var configuration = ImageManager.Configuration(diskSweepInterval: nil, maximumConcurrentDownloads: 6)
        configuration.maximumConcurrentDecodes = width
        let manager = ImageManager(configuration: configuration, loader: PNGLoader(), memoryCache: nil, diskCache: nil,
                                   decoder: probedDecoder(probe))
        let size = PixelSize(width: 20, height: 15)
        try await withThrowingTaskGroup(of: Bitmap.self) { group in
            for i in 0..<6 {
                let url = URL(string: "https://example.invalid/image\(i).png")!
                group.addTask { try await manager.image(for: url, size: size) }
            }
            var count = 0
            for try await image in group { count += 1; #expect(image.layout.size == size) }
            #expect(count == 6)
        }
        #expect(probe.peak >= 1 && probe.peak <= width && probe.total == 6)
    }
}
