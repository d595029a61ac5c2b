import Foundation
import Testing
import Tessera
import TesseraHTTP
import TesseraTesting
import TesseraTestSupport

/// `ImageManager` in process against a real nginx on loopback: `stale-while-revalidate` delivers the stale
/// image first and the changed file second (through the task's events); `stale-if-error` answers the stale
/// copy once nginx is stopped. Origin requests are read from nginx's access log.
@Suite("ImageManager stale-while-revalidate against nginx")
struct StaleWhileRevalidateEndToEndTests {
    static let box = PixelSize(width: 64, height: 64)

    /// A JPEG and a PNG photograph (different files, different pixels).
    static func photos() throws -> (URL, URL) {
        (try RealPhotos.smallest(1, ext: "jpg")[0], try RealPhotos.smallest(1, ext: "png")[0])
    }

    /// The library's own 64×64 fill thumbnail of `photo`: what a request for it must deliver.
    static func thumbnail(_ photo: URL) throws -> Bitmap {
        try ImageDecoder().thumbnail(try Data(contentsOf: photo), size: box, mode: .fill)
    }

    static func manager(cache: URL, loader: any DataLoading) throws -> ImageManager {
        try ImageManager(configuration: .init(disk: .init(directory: cache), diskSweepInterval: nil), loader: loader)
    }

    /// The real HTTP loader, whose conditional requests (revalidations) wait for ``gate`` first: the test
    /// holds the new image back until it has seen the stale one.
    final class GatedRevalidations: DataLoading {
        let gate = LoadGate()
        func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
            if request.isConditional { try await gate.wait() }
            return try await HTTPDataLoader.shared.load(request, progress: progress)
        }
    }

    @Test("a changed file under stale-while-revalidate: the stale image at once, the new one as .refreshed; a 304 adds nothing")
    func changedFileDeliveredSecond() async throws {
        let (original, replacement) = try Self.photos()
        let nginx = try Nginx(files: ["swr/photo": original])
        let cache = try ScratchDirectory("swr-cache")
        let url = try #require(URL(string: nginx.url("/swr/photo")))
        let request = ImageRequest(url: url, size: Self.box)
        let first = try await Self.manager(cache: cache.url, loader: HTTPDataLoader.shared).imageTask(for: request).response
        #expect(first.cacheType == .network)

        // The file changes at the origin (another photograph: new size, so a new ETag).
        let served = nginx.root.appendingPathComponent("swr/photo")
        let newBytes = try Data(contentsOf: replacement)
        try newBytes.write(to: served)

        // A new process's manager: only the disk copy, stale (max-age=0) but within stale-while-revalidate.
        let loader = GatedRevalidations()
        let manager = try Self.manager(cache: cache.url, loader: loader)
        let task = manager.imageTask(for: request)
        let events = task.events
        let stale = try await task.response
        #expect(stale.cacheType == .disk)
        #expect(try #require(PixelComparison.meanAbsoluteDifference(stale.image, try Self.thumbnail(original))) < 1.0,
                "the stale answer is the old photograph")
        loader.gate.open()
        var refreshed: [ImageResponse] = []
        var finished = 0
        for await event in events {
            switch event {
            case .refreshed(let response): refreshed.append(response)
            case .finished: finished += 1
            default: break
            }
        }
        #expect(finished == 1 && refreshed.count == 1)
        let fresh = try #require(refreshed.first)
        #expect(fresh.cacheType == .network && fresh.statusCode == 200)
        let want = try Self.thumbnail(replacement)
        #expect(try #require(PixelComparison.meanAbsoluteDifference(fresh.image, want)) < 1.0, "the new photograph's pixels")
        #expect(try #require(PixelComparison.meanAbsoluteDifference(stale.image, want)) > 5.0, "which differ from the old one's")
        let log = Nginx.requests(try nginx.settledLog(), for: "/swr/photo")
        #expect(log.map(\.status) == [200, 200], "\(log)")
        #expect(log.last.map { $0.ifNoneMatch != "-" && $0.bodyBytes == newBytes.count } == true, "a conditional request, answered in full")

        // Both caches hold the new image: memory at once, and the disk for a third manager.
        let memory = try #require(manager.cachedImage(for: url, size: Self.box))
        #expect(try #require(PixelComparison.meanAbsoluteDifference(memory, want)) < 1.0)
        let onDisk = try #require(await DiskCache(configuration: .init(directory: cache.url)).entry(for: url))
        #expect(onDisk.data == newBytes)

        // Unchanged now: the next stale answer is revalidated with a 304 and nothing more is delivered.
        let again = try Self.manager(cache: cache.url, loader: HTTPDataLoader.shared).imageTask(for: request)
        let againEvents = again.events
        #expect(try await again.response.cacheType == .disk)
        var more: [ImageTask.Event] = []
        for await event in againEvents { more.append(event) }
        #expect(more.count == 1, "only .finished: \(more)")
        #expect(Nginx.requests(try nginx.settledLog(), for: "/swr/photo").map(\.status) == [200, 200, 304])
    }

    @Test("nginx stopped: within stale-if-error the stale copy is the answer and no error is thrown; without it, a refusal")
    func originDown() async throws {
        let (original, _) = try Self.photos()
        let nginx = try Nginx(files: ["sie/photo": original, "stale/photo": original])
        let cache = try ScratchDirectory("sie-cache")
        let covered = try #require(URL(string: nginx.url("/sie/photo")))
        let uncovered = try #require(URL(string: nginx.url("/stale/photo")))
        let loader = HTTPDataLoader.shared
        let warm = try Self.manager(cache: cache.url, loader: loader)
        for url in [covered, uncovered] { _ = try await warm.imageTask(for: ImageRequest(url: url, size: Self.box)).response }
        #expect(try nginx.settledLog().map(\.status) == [200, 200])
        nginx.stop()

        let manager = try Self.manager(cache: cache.url, loader: loader)
        let answer = try await manager.imageTask(for: ImageRequest(url: covered, size: Self.box)).response
        #expect(answer.cacheType == .disk)
        #expect(try #require(PixelComparison.meanAbsoluteDifference(answer.image, try Self.thumbnail(original))) < 1.0)
        #expect(manager.statistics.downloads == 1, "the origin was tried")

        // The same stale copy without stale-if-error: the refusal is the answer.
        do throws(TesseraError) {
            _ = try await manager.imageTask(for: ImageRequest(url: uncovered, size: Self.box)).response
            Issue.record("a stale copy without stale-if-error must not hide the refusal")
        } catch {
            guard case .fetching(.connectionRefused) = error.reason else {
                Issue.record("expected a refused connection, got \(error)")
                return
            }
        }
    }
}
