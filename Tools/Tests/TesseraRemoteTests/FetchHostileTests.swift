import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@_spi(Internal) @testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// Hostile HTTP input against the Hummingbird origin on 127.0.0.1: bodies that stop trickling,
/// redirects to other schemes and in cycles, URLs crafted to escape the cache directory. Timeouts
/// and limits are small so that each test is fast; nothing waits on a clock (gates never open
/// until the origin stops), and nothing asserts a duration.
@Suite("Hostile HTTP input: slow-loris, redirects, URLs escaping the cache")
struct FetchHostileTests {
    @Test("a body that stops after its first bytes (slow-loris) fails with .timeout; nothing is cached")
    func stalledBody() async throws {
        try await Origin.with { origin in
            let png = try pngBytes(width: 200, height: 200)
            origin.set("/stall.png", .init(body: png, stall: OriginGate(), stallAfter: 100))
            let url = origin.url("/stall.png")
            let progress = ProgressLog()
            await #expect(throws: TesseraError(.fetching(.timeout(url: url.absoluteString)))) {
                // 3 s, not 300 ms: the head must arrive before the timeout even on a loaded machine
                // (the body never completes, so the timeout always fires; only its length varies).
                _ = try await HTTPDataLoader.shared.load(LoadRequest(url: url, timeout: .seconds(3)), progress: { progress.add($0) })
            }
            // The head arrived (with its Content-Length) before the body stalled.
            #expect(progress.all.first?.expectedBytes == png.count)
            let manager = try makeManager { $0.requestTimeout = .milliseconds(300) }
            await #expect(throws: TesseraError(.fetching(.timeout(url: url.absoluteString)))) {
                _ = try await manager.image(for: url)
            }
            #expect(manager.isCachedOnDisk(url) == false)
            #expect(manager.cachedImage(for: url) == nil)
        }
    }

    @Test("a redirect cycle through two URLs, and a chain one over the limit, fail with .redirectLimit")
    func redirectCycleAndChain() async throws {
        try await Origin.with { origin in
            origin.set("/ping", .init(redirect: "/pong"))
            origin.set("/pong", .init(redirect: "/ping"))
            origin.set("/end.png", .init(body: try pngBytes()))
            for i in 0..<4 { origin.set("/c\(i)", .init(redirect: i == 0 ? "/end.png" : "/c\(i - 1)")) }
            let loader = HTTPDataLoader(configuration: .init(maximumRedirects: 3))
            let manager = ImageManager(configuration: .init(diskSweepInterval: nil), loader: loader, memoryCache: nil,
                                       diskCache: try DiskCache(configuration: .init(directory: try temporaryDirectory("redirect"))))
            #expect(try await manager.data(for: origin.url("/c2")) == Data(try pngBytes()))   // 3 redirects: allowed
            for path in ["/ping", "/c3"] {
                let url = origin.url(path)
                await #expect(throws: TesseraError(.fetching(.redirectLimit(url: url.absoluteString)))) {
                    _ = try await manager.image(for: url)
                }
                #expect(manager.isCachedOnDisk(url) == false)
            }
            // The cycle was cut: at most limit + 1 requests reached the origin for it.
            #expect(origin.count("/ping") + origin.count("/pong") <= 4)
            try await loader.shutdown()
        }
    }

    @Test("a redirect to another scheme (file, unix socket, ftp) is a typed error, never followed")
    func redirectToOtherSchemes() async throws {
        try await Origin.with { origin in
            let secret = try temporaryDirectory("secret").appendingPathComponent("secret.png")
            try Data(try pngBytes()).write(to: secret)
            origin.set("/file", .init(redirect: secret.absoluteString))
            origin.set("/unix", .init(redirect: "http+unix://%2Ftmp%2Ftessera-no-such.sock/x.png"))
            origin.set("/ftp", .init(redirect: "ftp://127.0.0.1/x.png"))
            let manager = try makeManager()
            for path in ["/file", "/unix", "/ftp"] {
                let url = origin.url(path)
                do {
                    let data = try await manager.data(for: url)
                    Issue.record("\(path) was followed: \(data.count) bytes")
                } catch let error as TesseraError {
                    guard case .fetching = error.reason else { Issue.record("\(path): \(error)"); continue }
                }
                #expect(manager.isCachedOnDisk(url) == false)
            }
        }
    }

    @Test("URLs with ../, encoded %2e%2e%2f, %00, or 20 000 characters: files only inside the cache directory, errors typed")
    func urlsEscapingTheCache() async throws {
        try await Origin.with { origin in
            let png = try pngBytes()
            origin.set("*", .init(body: png))
            let parent = try temporaryDirectory("escape")
            let cacheDirectory = parent.appendingPathComponent("cache", isDirectory: true)
            try Data("keep".utf8).write(to: parent.appendingPathComponent("sentinel"))
            let manager = try makeManager(directory: cacheDirectory)
            let base = "http://127.0.0.1:\(origin.port)"
            let paths = [
                "/../../escape.png", "/a/../../../escape.png", "/%2e%2e%2f%2e%2e%2fescape.png", "/..%2F..%2F..%2Fescape.png",
                "/%2E%2E/%2E%2E/escape.png", "/nul%00.png", "/x.png?file=../../../escape.png", "/x.png#../../escape",
                "/" + String(repeating: "a", count: 20_000) + ".png", "/" + String(repeating: "../", count: 500) + "escape.png",
            ]
            var stored = Set<String>()
            for path in paths {
                let url = try #require(URL(string: base + path), "\(path.prefix(40))")
                let file = try #require(manager.diskCache as? DiskCache).filePath(for: url)
                #expect(file.hasPrefix(cacheDirectory.path + "/") && !file.dropFirst(cacheDirectory.path.count + 1).contains("/"))
                do {
                    _ = try await manager.data(for: url)
                    if manager.isCachedOnDisk(url) { stored.insert(DiskCacheFile.name(for: url)) }
                } catch {
                    #expect(error is TesseraError, "\(path.prefix(40)): \(error)")
                }
            }
            #expect(!stored.isEmpty)
            // Nothing appeared next to the cache directory, and inside it only entry files.
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: parent.path)) == ["cache", "sentinel"])
            let names = try FileManager.default.contentsOfDirectory(atPath: cacheDirectory.path)
            #expect(names.allSatisfy(DiskCacheFile.isEntryName), "\(names)")
            #expect(Set(names) == stored)
            #expect(try String(contentsOf: parent.appendingPathComponent("sentinel"), encoding: .utf8) == "keep")
        }
    }
}
