import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// The disk cache against files that were replaced, made unreadable or cannot be written, and the
/// regressions of `scripts/fuzz freshness`. Except where marked, every check also holds for root.
@Suite("DiskCache: hostile files, permissions, full disk; freshness fuzz regressions")
struct DiskCacheHostileTests {
    static let isRoot = getuid() == 0
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func url(_ name: String) -> URL { URL(string: "http://127.0.0.1/\(name).png")! }

    static func store(_ cache: DiskCache, _ name: String, _ bytes: [UInt8]) async throws {
        let url = url(name)
        try await cache.store(Data(bytes), info: HTTPCacheInfo(url: url.absoluteString, storedAt: now, expiresAt: now + 60), for: url)
    }

    static func ioErrno(_ error: any Error) -> Int32? {
        guard let error = error as? TesseraError, case .io(_, _, let code) = error.reason else { return nil }
        return code
    }

    @Test("an entry replaced by a symlink to a valid cache file elsewhere is not followed: a miss, the link removed, its target untouched")
    func symlinkedEntry() async throws {
        let directory = try temporaryDirectory("disk-symlink"), elsewhere = try temporaryDirectory("disk-elsewhere")
        let cache = try DiskCache(configuration: .init(directory: directory, ageLimit: nil))
        let outside = try DiskCache(configuration: .init(directory: elsewhere, ageLimit: nil))
        try await Self.store(cache, "a", [1, 2, 3])
        try await Self.store(cache, "b", [4, 5])
        try await Self.store(outside, "a", [6, 6, 6])   // what following the link would serve
        let path = cache.filePath(for: Self.url("a")), target = outside.filePath(for: Self.url("a"))
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        #expect(unlink(path) == 0 && symlink(target, path) == 0)
        #expect(await cache.entry(for: Self.url("a")) == nil)
        #expect(cache.contains(Self.url("a")) == false)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
        #expect(await cache.entry(for: Self.url("b"))?.data == Data([4, 5]))

        // A link planted before opening is not indexed, and a store replaces the link, not its target.
        #expect(symlink(target, path) == 0)
        let reopened = try DiskCache(configuration: .init(directory: directory, ageLimit: nil))
        #expect(reopened.contains(Self.url("a")) == false && reopened.statistics.count == 1)
        try await Self.store(reopened, "a", [7])
        #expect(await reopened.entry(for: Self.url("a"))?.data == Data([7]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before)
    }

    @Test("an entry replaced by a FIFO or a directory: a miss without blocking; a store over the directory is a typed error")
    func fifoAndDirectory() async throws {
        let directory = try temporaryDirectory("disk-fifo")
        let cache = try DiskCache(configuration: .init(directory: directory, ageLimit: nil))
        try await Self.store(cache, "fifo", [1])
        try await Self.store(cache, "keep", [2, 2])
        let fifo = cache.filePath(for: Self.url("fifo"))
        #expect(unlink(fifo) == 0 && mkfifo(fifo, 0o644) == 0)
        #expect(await cache.entry(for: Self.url("fifo")) == nil)   // O_NONBLOCK: returns at once
        #expect(cache.contains(Self.url("fifo")) == false)

        let dir = cache.filePath(for: Self.url("dir"))
        #expect(mkdir(dir, 0o755) == 0)
        do {
            try await Self.store(cache, "dir", [3])
            Issue.record("a store over a directory should fail")
        } catch {
            #expect(Self.ioErrno(error) == EISDIR, "\(error)")
        }
        #expect(await cache.entry(for: Self.url("keep"))?.data == Data([2, 2]))
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains { $0.hasPrefix(DiskCacheFile.temporaryPrefix) }, "\(names)")
        #expect(try DiskCache(configuration: .init(directory: directory, ageLimit: nil)).statistics.count == 1)
    }

    @Test("an unreadable entry is a miss and removed; a read-only directory makes stores fail typed (EACCES), entries intact",
          .enabled(if: !isRoot, "root bypasses file permissions; the symlink, FIFO and RLIMIT_FSIZE tests cover root"))
    func permissions() async throws {
        let directory = try temporaryDirectory("disk-perm")
        let cache = try DiskCache(configuration: .init(directory: directory, ageLimit: nil))
        try await Self.store(cache, "a", [1])
        try await Self.store(cache, "b", [2])
        #expect(chmod(cache.filePath(for: Self.url("a")), 0) == 0)
        #expect(await cache.entry(for: Self.url("a")) == nil)
        #expect(chmod(directory.path, 0o555) == 0)
        defer { chmod(directory.path, 0o755) }
        do {
            try await Self.store(cache, "c", [3])
            Issue.record("a store into a read-only directory should fail")
        } catch {
            #expect(Self.ioErrno(error) == EACCES, "\(error)")
        }
        #expect(await cache.entry(for: Self.url("b"))?.data == Data([2]))
    }

    @Test("writes refused for lack of space (RLIMIT_FSIZE, in a child process): typed EFBIG, earlier entries intact after reopen")
    func fileSizeLimit() throws {
        let directory = try temporaryDirectory("disk-fill")
        let child = try StressChild(arguments: ["--disk-fill", "--disk-cache", directory.path])
        let output = child.allLines()
        #expect(child.finish() == 0, "\(output)")
        #expect(output.last?.hasPrefix("disk-fill stored=8 error=write") == true, "\(output)")
        #expect(output.last?.contains("errno \(EFBIG)") == true, "\(output)")
    }

    @Test("fuzz regressions: Age and max-age are delta-seconds, lifetimes clamped to 2³¹ s, always storable")
    func freshnessRegressions() throws {
        let url = Self.url("f")
        func info(_ headers: [String: String]) -> HTTPCacheInfo {
            HTTPCacheInfo(response: LoadResponse(url: url, statusCode: 200, headers: headers), requestedURL: url, now: Self.now, defaultMaxAge: .seconds(500))
        }
        // `Age: -inf` made the copy fresh forever, and its infinite date could not be stored.
        let infinite = info(["Cache-Control": "max-age=60", "Age": "-inf"])
        #expect(infinite.expiresAt == Self.now + 60)
        #expect(DiskCacheFile.decode(try DiskCacheFile.encode(Data([1]), info: infinite))?.info == infinite)
        #expect(info(["Cache-Control": "max-age=60", "Age": "nan"]).expiresAt == Self.now + 60)
        #expect(info(["Cache-Control": "max-age=9223372036854775807", "Age": "1"]).expiresAt == Self.now + 2_147_483_647)
        #expect(info(["Cache-Control": "max-age=99999999999999999999999"]).expiresAt == Self.now + 2_147_483_648)
        #expect(info(["Cache-Control": "max-age=abc"]).expiresAt == Self.now)    // invalid freshness is stale
        #expect(info(["Cache-Control": "max-age=-5"]).expiresAt == Self.now)
        #expect(info(["Expires": "Fri, 01 Jan 9999 00:00:00 GMT"]).expiresAt == Self.now + 2_147_483_648)
    }

    @Test("HTTP dates: IMF-fixdate exact; other text (the non-ASCII input that leaked in DateFormatter) is nil")
    func httpDates() {
        #expect(HTTPCacheInfo.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPCacheInfo.parseHTTPDate(" Tue, 14 Nov 2023 22:13:20 GMT ") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(HTTPCacheInfo.parseHTTPDate("Thu, 29 Feb 2024 00:00:00 GMT") == Date(timeIntervalSince1970: 1_709_164_800))
        for bad in ["0", "", "10A\u{FC79D}", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Foo 1994 08:49:37 GMT",
                    "Sun, 6 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT"] {
            #expect(HTTPCacheInfo.parseHTTPDate(bad) == nil, "\(bad)")
        }
        // The formatter writes what the parser reads (the `Date` header of `tessera serve`'s memory hits).
        #expect(HTTPCacheInfo.formatHTTPDate(Date(timeIntervalSince1970: 784_111_777.9)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPCacheInfo.formatHTTPDate(Date(timeIntervalSince1970: 1_709_164_800)) == "Thu, 29 Feb 2024 00:00:00 GMT")
        for seconds in stride(from: 0, to: 4_000_000_000, by: 86_400 * 97 + 3_671) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(HTTPCacheInfo.parseHTTPDate(HTTPCacheInfo.formatHTTPDate(date)) == date)
        }
    }

    @Test("absurd dates in cache information (from a file or a caller) do not trap when written")
    func absurdDates() async throws {
        let cache = try DiskCache(configuration: .init(directory: try temporaryDirectory("disk-dates"), ageLimit: nil))
        let url = Self.url("d")
        for stored in [1e300, -1e300, 0] {
            let info = HTTPCacheInfo(url: url.absoluteString, storedAt: Date(timeIntervalSince1970: stored), expiresAt: Self.now)
            try await cache.store(Data([9]), info: info, for: url)
            #expect(await cache.entry(for: url)?.info == info)
        }
    }
}
