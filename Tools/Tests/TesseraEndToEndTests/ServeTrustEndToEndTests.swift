import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera serve` (the release binary) where it once went wrong: presets of opposite shapes across a
/// restart, slot records damaged on disk, a decode that outlives the request timeout, a miss beyond the
/// decode queue's bound, `HEAD`.
@Suite("tessera serve, trust, release binary", .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeTrustEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    /// Six real photographs under a root, by name, with their upright sizes.
    static func photos(_ scratch: ScratchDirectory) throws -> (root: String, photos: [(name: String, size: PixelSize)]) {
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var photos: [(String, PixelSize)] = []
        for (index, photo) in try RealPhotos.smallest(6, ext: "jpg").enumerated() {
            let name = "p\(index).jpg"
            try FileManager.default.copyItem(atPath: photo.path, toPath: root + "/" + name)
            photos.append((name, try RealPhotos.size(of: root + "/" + name)))
        }
        return (root, photos)
    }

    /// The size of a `source` image in a `fit` box, computed here.
    static func fitted(_ source: PixelSize, _ width: Int, _ height: Int) -> PixelSize {
        let scale = min(Double(width) / Double(source.width), Double(height) / Double(source.height))
        return PixelSize(width: max(1, Int((Double(source.width) * scale).rounded())), height: max(1, Int((Double(source.height) * scale).rounded())))
    }

    /// Asks for `name` in `preset` (a `fit` box of `width`×`height`) as PNG and checks it against the
    /// library's own render of the file: the right size (worked out here) and the same pixels. Returns `X-Tessera-Cache`.
    static func check(_ server: Server, root: String, photo: (name: String, size: PixelSize), preset: String,
                      width: Int, height: Int) async throws -> String {
        let response = try await server.get("/v1/\(preset)/\(photo.name)?fmt=png")
        #expect(response.status == 200, "\(preset)/\(photo.name)")
        let answer = try ImageDecoder().decode(Data(response.body))
        let size = fitted(photo.size, width, height)
        #expect(PixelSize(width: answer.width, height: answer.height) == size, "\(preset)/\(photo.name)")
        let reference = try PixelComparison.libraryRender(of: URL(fileURLWithPath: root + "/" + photo.name),
                                                          processing: ImageProcessing(width: width, height: height, mode: .fit))
        let difference = PixelComparison.meanAbsoluteDifference(answer, reference)
        #expect(difference.map { $0 < 1 } == true, "\(preset)/\(photo.name): mean difference \(String(describing: difference))")
        return response.headers["x-tessera-cache"] ?? ""
    }

    @Test("two fit presets of opposite shapes, a restart, the other order", arguments: [["a", "b"], ["b", "a"]])
    func oppositeFitPresetsAreRightAfterARestart(order: [String]) async throws {
        let scratch = try ScratchDirectory("serve-opposite")
        let (root, photos) = try Self.photos(scratch)
        let boxes = ["a": (300, 100), "b": (100, 300)]
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--preset", "a:300x100:fit", "--preset", "b:100x300:fit"]
        for (round, names) in [order, order.reversed()].enumerated() {
            let server = try await Server(arguments, scratch: scratch)
            for name in names {
                for photo in photos {
                    let outcome = try await Self.check(server, root: root, photo: photo, preset: name,
                                                       width: boxes[name]!.0, height: boxes[name]!.1)
                    #expect(outcome == (round == 0 ? "produced" : "table"))
                }
            }
            #expect(await server.terminate().status == 0)
        }
    }

    /// Bytes of a slot record changed on disk (the size it names): the table's checksum or the record's
    /// digest refuses the entry, which is rebuilt from its source; nothing of the damaged slot is served.
    @Test func aSlotRecordDamagedOnDiskIsRebuiltNotServed() async throws {
        let scratch = try ScratchDirectory("serve-damaged")
        let (root, photos) = try Self.photos(scratch)
        let photo = photos[0]
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--preset", "a:300x100:fit"]
        let first = try await Server(arguments, scratch: scratch)
        #expect(try await Self.check(first, root: root, photo: photo, preset: "a", width: 300, height: 100) == "produced")
        #expect(await first.terminate().status == 0)
        // Every record in the table file names the whole box instead.
        let files = try FileManager.default.contentsOfDirectory(atPath: scratch.path("tables")).filter { $0.contains("serve-a-") }
        let file = scratch.path("tables") + "/" + (try #require(files.first))
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let magic = Array("TSRSLOT2".utf8)
        var damaged = 0
        var index = 0
        while index + 16 <= bytes.count {
            if bytes[index] == magic[0], Array(bytes[index..<index + 8]) == magic {
                bytes[index + 8] = 44; bytes[index + 9] = 1   // width 300
                bytes[index + 12] = 100; bytes[index + 13] = 0   // height 100
                damaged += 1
            }
            index += 1
        }
        #expect(damaged == 1)
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let second = try await Server(arguments, scratch: scratch)
        #expect(try await Self.check(second, root: root, photo: photo, preset: "a", width: 300, height: 100) == "produced")
        #expect(await second.terminate().status == 0)
    }

    /// A slow source to decode, written to `path`: a large PNG (no cheap downscaling in its decoder), a
    /// real photograph tiled 3×3.
    static func writeLargePNG(to path: String) throws {
        let photo = try ImageDecoder().decode(try Data(contentsOf: try RealPhotos.smallest(1, ext: "jpg")[0]))
        let large = Bitmap(width: photo.width * 3, height: photo.height * 3, style: .bgra32) { view in
            photo.withUnsafeBytes { source in
                for y in 0..<view.layout.height {
                    for tile in 0..<3 {
                        (view.row(y) + tile * photo.width * 4).copyMemory(from: source.baseAddress! + (y % photo.height) * photo.bytesPerRow,
                                                                          byteCount: photo.width * 4)
                    }
                }
            }
        }
        try Data(try PNGEncoder().encode(large)).write(to: URL(fileURLWithPath: path))
    }

    /// The value of the unlabelled metric `name` in a `/metrics` text; `nil` when it is not there.
    static func metric(_ name: String, in text: String) -> Double? {
        text.split(separator: "\n").lazy.compactMap { line -> Double? in
            let parts = line.split(separator: " ")
            return parts.count == 2 && parts[0] == name ? Double(parts[1]) : nil
        }.first
    }

    /// A decode that outlives `--request-timeout` is answered `504 timeout` at the deadline; its work
    /// goes on and the image is then served from it (one decode in all).
    @Test func aDecodeOutlivingTheRequestTimeoutIs504AndItsWorkIsKept() async throws {
        let scratch = try ScratchDirectory("serve-timeout")
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try Self.writeLargePNG(to: root + "/large.png")
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--request-timeout", "0.02",
                                       "--log-format", "json"], scratch: scratch)
        let first = try await server.get("/v1/thumb/large.png")
        #expect(first.status == 504)
        #expect(first.text.contains("\"timeout\""))
        // Within 5× the limit by the server's own clock (its log line's latency, from the request's arrival
        // to its answer). The client's clock is not asked: it adds the scheduling of every other test running
        // on this machine at the same time. That the answer did not wait for the decode is checked below
        // against the decode's own duration, which any load stretches as well.
        #expect(await server.output.wait(for: "\"status\":\"504\"", timeout: .seconds(10)))
        let line = try #require(server.log.split(separator: "\n").first { $0.contains("\"status\":\"504\"") })
        let logged = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let latency = try #require((logged["latency_ms"] as? String).flatMap(Double.init))
        #expect(latency < 100, "answered \(latency) ms after arrival; the limit is 20 ms")
        // The decode goes on: ask again until the image comes (each ask is bounded by the same limit).
        var answer: RawHTTP.Response?
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let response = try await server.get("/v1/thumb/large.png")
            if response.status == 200 { answer = response; break }
            #expect(response.status == 504)
            await Task.yield()
        }
        let served = try #require(answer)
        // From the table or the memory cache the first decode filled, or from that decode itself when this
        // request joined it while it ran (`coalesced`, `produced`): either way one decode in all (below).
        #expect(["table", "memory", "coalesced", "produced"].contains(served.headers["x-tessera-cache"] ?? ""))
        let image = try ImageDecoder().decode(Data(served.body))
        #expect(PixelSize(width: image.width, height: image.height) == PixelSize(width: 200, height: 200))
        let metrics = try await server.get("/metrics")
        #expect(metrics.text.contains("tessera_decode_seconds_count 1\n"))
        let decodeSeconds = try #require(Self.metric("tessera_decode_seconds_sum", in: metrics.text))
        #expect(latency < decodeSeconds * 1000, "the 504 came \(latency) ms after arrival, the decode took \(decodeSeconds) s")
        #expect(metrics.text.contains("tessera_http_request_duration_seconds_count{route=\"preset\",status=\"504\"}")
                || metrics.text.contains("tessera_http_request_duration_seconds_count{status=\"504\",route=\"preset\"}"))
        #expect(await server.terminate().status == 0)
    }

    /// With `--max-decodes 1 --max-queued-decodes 0`, a miss that needs a decode while another decode
    /// holds the one permit is refused at once: `503` with `too_many_decodes`, nothing kept, and the
    /// same request is served once the permit is free. The held decode is a large PNG's, seen running on
    /// `/metrics` (`tessera_decodes_running 1` while `tessera_decode_seconds_count` is still 0) before the
    /// refused request is sent.
    @Test func aMissBeyondTheDecodeQueueIs503() async throws {
        let scratch = try ScratchDirectory("serve-queue-full")
        let (root, photos) = try Self.photos(scratch)
        try Self.writeLargePNG(to: root + "/large.png")
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"),
                                       "--max-decodes", "1", "--max-queued-decodes", "0"], scratch: scratch)
        let held = Task { try await server.get("/v1/thumb/large.png") }
        var decoding = false
        let deadline = ContinuousClock.now + .seconds(60)
        while !decoding, ContinuousClock.now < deadline {
            let metrics = try await server.get("/metrics").text
            decoding = Self.metric("tessera_decodes_running", in: metrics) == 1
                && (Self.metric("tessera_decode_seconds_count", in: metrics) ?? 0) == 0
        }
        try #require(decoding, "the large PNG's decode was never seen running")
        let refused = try await server.get("/v1/thumb/\(photos[0].name)")
        #expect(refused.status == 503)
        #expect(refused.headers["content-type"] == "application/json")
        let body = try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: String]
        #expect(body?["error"] == "too_many_decodes", "\(refused.text)")
        let large = try await held.value
        #expect(large.status == 200)
        #expect(large.headers["x-tessera-cache"] == "produced")
        // The refusal kept nothing: the same request now decodes and is served.
        let served = try await server.get("/v1/thumb/\(photos[0].name)")
        #expect(served.status == 200)
        #expect(served.headers["x-tessera-cache"] == "produced")
        let metrics = try await server.get("/metrics").text
        #expect(Self.metric("tessera_decode_seconds_count", in: metrics) == 2)
        #expect(metrics.contains("tessera_http_request_duration_seconds_count{route=\"preset\",status=\"503\"} 1")
                || metrics.contains("tessera_http_request_duration_seconds_count{status=\"503\",route=\"preset\"} 1"))
        #expect(await server.terminate().status == 0)
        #expect(server.log.contains("status=503"))
    }

    /// `HEAD` answers like `GET` without a body and is logged as `HEAD`.
    @Test func headIsAnsweredAndLoggedAsHead() async throws {
        let scratch = try ScratchDirectory("serve-head")
        let (root, photos) = try Self.photos(scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables")], scratch: scratch)
        let head = try await RawHTTP.head(port: server.port, "/v1/thumb/\(photos[0].name)")
        let get = try await server.get("/v1/thumb/\(photos[0].name)")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["content-length"] == String(get.body.count))
        #expect(head.headers["etag"] == get.headers["etag"])
        #expect(await server.terminate().status == 0)
        #expect(server.log.contains("method=HEAD"))
        #expect(server.log.contains("method=GET"))
    }

    /// Without `--tables`, two servers of two roots run side by side (no shared lock), and a restart
    /// answers from the tables the last run left (kept in the user's cache directory, not in /tmp).
    @Test func defaultTablesArePerRootAndOutliveARestart() async throws {
        let scratch = try ScratchDirectory("serve-default-tables")
        let (root, photos) = try Self.photos(scratch)
        let other = scratch.path("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: root + "/" + photos[1].name, toPath: other + "/" + photos[1].name)
        let environment = ["XDG_CACHE_HOME": scratch.path("cache")]
        let first = try await Server(["--root", root], scratch: scratch, environment: environment)
        let second = try await Server(["--root", other], scratch: scratch, environment: environment)
        #expect(try await first.get("/v1/thumb/\(photos[0].name)").headers["x-tessera-cache"] == "produced")
        #expect(try await second.get("/v1/thumb/\(photos[1].name)").headers["x-tessera-cache"] == "produced")
        #expect(await first.terminate().status == 0)
        #expect(await second.terminate().status == 0)
        let directories = try FileManager.default.contentsOfDirectory(atPath: scratch.path("cache") + "/tessera/serve")
        #expect(directories.count == 2)
        let again = try await Server(["--root", root], scratch: scratch, environment: environment)
        #expect(try await again.get("/v1/thumb/\(photos[0].name)").headers["x-tessera-cache"] == "table")
        #expect(await again.terminate().status == 0)
    }
}
