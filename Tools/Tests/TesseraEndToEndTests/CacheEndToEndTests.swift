import Foundation
import Testing
@_spi(Internal) import Tessera

/// `tessera cache stats|clear --json` (release build) on an empty disk cache and on one the library's
/// ``DiskCache`` filled in this process with real photographs (no network involved).
@Suite("release tessera cache stats and clear",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct CacheEndToEndTests {
    struct StatsReport: Decodable {
        var directory: String
        var entries: Int
        var bytes: Int
        var sizeLimit: Int
        var ageLimitSeconds: Double?
        var oldestStoredAt: String?
    }

    struct ClearReport: Decodable {
        var directory: String
        var removedEntries: Int
        var removedBytes: Int
    }

    static func stats(_ dir: String) async throws -> StatsReport {
        let run = try await ReleaseCLI.run(["cache", "stats", "--cache-dir", dir, "--json"])
        #expect(run.status == 0 && run.signal == nil, "\(run)")
        return try run.json(StatsReport.self)
    }

    static func clear(_ dir: String) async throws -> ClearReport {
        let run = try await ReleaseCLI.run(["cache", "clear", "--cache-dir", dir, "--json"])
        #expect(run.status == 0 && run.signal == nil, "\(run)")
        return try run.json(ClearReport.self)
    }

    /// A cache directory that does not exist yet: `stats` reports it (created) with no entries and the
    /// library's default limits, and `clear` removes nothing.
    @Test("stats and clear on an empty cache")
    func empty() async throws {
        let scratch = try ScratchDirectory("cache-empty")
        let dir = scratch.path("images")
        let defaults = DiskCache.Configuration(directory: URL(fileURLWithPath: dir))

        let stats = try await Self.stats(dir)
        #expect(stats.directory == URL(fileURLWithPath: dir).standardizedFileURL.path)
        #expect(stats.entries == 0 && stats.bytes == 0 && stats.oldestStoredAt == nil)
        #expect(stats.sizeLimit == defaults.sizeLimit && stats.ageLimitSeconds == defaults.ageLimit.map { Double($0.components.seconds) })
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue)

        let cleared = try await Self.clear(dir)
        #expect(cleared.removedEntries == 0 && cleared.removedBytes == 0)
    }

    /// A cache directory that cannot be created names the path and the operating system's reason,
    /// as `mkdir -p` would give it: `EEXIST` where a regular file is in the way, `ENOTDIR` below one
    /// (not FileManager's Cocoa code printed as an errno, "Unknown error 516").
    @Test("stats names the real reason when the cache directory cannot be created")
    func uncreatableDirectory() async throws {
        let scratch = try ScratchDirectory("cache-blocked")
        let file = scratch.path("a-file")
        try Data("in the way".utf8).write(to: URL(fileURLWithPath: file))
        for (dir, code) in [(file, EEXIST), (file + "/images", ENOTDIR)] {
            let run = try await ReleaseCLI.run(["cache", "stats", "--cache-dir", dir, "--json"])
            #expect(run.signal == nil && run.status != 0, "\(run)")
            #expect(run.errors.contains(dir) && run.errors.contains("\(String(cString: strerror(code))) (errno \(code))"), "\(run)")
        }
    }

    /// Three photographs stored with the library (stored one, two and three hours ago): `stats`
    /// reports three entries, bytes equal to the sizes of their files on disk, and the oldest store
    /// time; `clear` reports the same count and bytes, deletes every entry file but leaves a foreign
    /// file alone, and afterwards `stats` and the library see an empty cache.
    @Test("stats and clear on a cache the library filled")
    func populated() async throws {
        let scratch = try ScratchDirectory("cache-full")
        let dir = scratch.path("images")
        let photos = try RealPhotos.smallest(3, ext: "jpg")
        let urls = photos.indices.map { URL(string: "http://127.0.0.1:9/photos/\($0).jpg")! }
        let now = Date()
        let stored = photos.indices.map { now.addingTimeInterval(-3600 * Double($0 + 1)) }
        let paths: [String]
        do {
            let cache = try DiskCache(configuration: DiskCache.Configuration(directory: URL(fileURLWithPath: dir)))
            for (index, photo) in photos.enumerated() {
                let info = HTTPCacheInfo(url: urls[index].absoluteString, storedAt: stored[index],
                                         expiresAt: now.addingTimeInterval(3600))
                try await cache.store(try Data(contentsOf: photo), info: info, for: urls[index])
            }
            paths = urls.map { cache.filePath(for: $0) }
        }
        let foreign = dir + "/notes.txt"
        try Data("not a cache entry".utf8).write(to: URL(fileURLWithPath: foreign))
        let fileBytes = try paths.map { try #require(FileFacts.size($0), "\($0) was written") }.reduce(0, +)
        let bodyBytes = try photos.map { try Data(contentsOf: $0).count }.reduce(0, +)

        let stats = try await Self.stats(dir)
        #expect(stats.entries == photos.count)
        #expect(stats.bytes == fileBytes && stats.bytes > bodyBytes, "bytes of the entry files (body and header)")
        let oldest = try #require(stats.oldestStoredAt.flatMap { ISO8601DateFormatter().date(from: $0) })
        #expect(abs(oldest.timeIntervalSince(stored.min()!)) < 1, "oldest \(stats.oldestStoredAt ?? "-")")

        let cleared = try await Self.clear(dir)
        #expect(cleared.removedEntries == photos.count && cleared.removedBytes == fileBytes)
        for path in paths { #expect(!FileManager.default.fileExists(atPath: path), "\(path) removed") }
        #expect(FileManager.default.fileExists(atPath: foreign), "clear removes cache entries only")

        let after = try await Self.stats(dir)
        #expect(after.entries == 0 && after.bytes == 0 && after.oldestStoredAt == nil)
        let reopened = try DiskCache(configuration: DiskCache.Configuration(directory: URL(fileURLWithPath: dir)))
        #expect(reopened.statistics.count == 0)
        #expect(await reopened.entry(for: urls[0]) == nil)
    }
}
