import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera serve` as users run it: the release binary as a child process on 127.0.0.1, real photographs.
@Suite("tessera serve, release binary", .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeEndToEndTests {
    /// A running `tessera serve`: its port, its output (in a log file, and lines to wait for), and SIGTERM.
    final class Server: Sendable {
        let port: Int
        let process: ChildProcess
        let output: OutputWatcher
        var errorLog: String { output.path }

        init(_ arguments: [String], scratch: ScratchDirectory, environment: [String: String] = [:]) async throws {
            (port, process, output) = try await Self.start(arguments, scratch: scratch, environment: environment)
        }

        /// Starts the release binary's `tessera serve` with `arguments` on a free loopback port and waits until it
        /// answers. A port found free can be taken by another test's connection before the server binds it; the
        /// server then exits at once with EADDRINUSE, and another port is tried (five in all).
        private static func start(_ arguments: [String], scratch: ScratchDirectory,
                                  environment: [String: String]) async throws -> (Int, ChildProcess, OutputWatcher) {
            let binary = try #require(ReleaseCLI.binary)
            var env = ProcessInfo.processInfo.environment
            env.merge(environment) { $1 }
            var attempts = 0
            while true {
                attempts += 1
                let port = try Origin.unusedPort()
                let output = try OutputWatcher(path: scratch.path("serve-\(port).log"))
                let process = try ChildProcess.spawn(binary.path, ["serve", "--listen", "127.0.0.1:\(port)"] + arguments,
                                                     environment: env, standardOutput: output.writeEnd, standardError: output.writeEnd)
                output.childStarted()
                if await answers(port: port, path: "/healthz", process: process) { return (port, process, output) }
                await output.waitUntilEnded()
                if attempts < 5, !output.lines(containing: "Address already in use").isEmpty { continue }
                Issue.record("tessera serve exited: \((try? String(contentsOfFile: output.path, encoding: .utf8)) ?? "")")
                throw CancellationError()
            }
        }

        /// Polls `path` on `port` until it answers 200 (true), or `process` exits first (false).
        static func answers(port: Int, path: String, process: ChildProcess) async -> Bool {
            while true {
                if let health = try? await RawHTTP.get(port: port, path), health.status == 200 { return true }
                var status: Int32 = 0
                if waitpid(process.pid, &status, WNOHANG) == process.pid { return false }
                await Task.yield()
            }
        }

        /// Polls `path` on `port` until it answers 200; fails if `process` (`name`, logging to `log`) exits first.
        static func waitUntilAnswering(port: Int, path: String, process: ChildProcess, name: String, log: String) async throws {
            if await answers(port: port, path: path, process: process) { return }
            Issue.record("\(name) exited: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            throw CancellationError()
        }

        func get(_ target: String, headers: [String: String] = [:]) async throws -> RawHTTP.Response {
            try await RawHTTP.get(port: port, target, headers: headers)
        }

        /// Sends SIGTERM and waits for the exit.
        func terminate() async -> ChildProcess.Exit {
            kill(process.pid, SIGTERM)
            let exit = await process.wait()
            await output.waitUntilEnded()
            return exit
        }

        var log: String { (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "" }
    }

    /// A root with three real photographs (JPEG) and one PNG.
    static func photoRoot(_ scratch: ScratchDirectory) throws -> (root: String, names: [String]) {
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var names: [String] = []
        for (index, photo) in try RealPhotos.smallest(3, ext: "jpg").enumerated() {
            let name = "photo \(index).jpg"
            try FileManager.default.copyItem(atPath: photo.path, toPath: root + "/" + name)
            names.append(name)
        }
        return (root, names)
    }

    @Test func servesPresetsResizesAndShutsDownCleanly() async throws {
        let scratch = try ScratchDirectory("serve")
        let (root, names) = try Self.photoRoot(scratch)
        let source = try RealPhotos.size(of: root + "/" + names[0])
        let config = scratch.path("serve.json")
        try Data("""
        {"presets": [{"name": "card", "width": 160, "height": 120, "mode": "fill"}], "maxAgeSeconds": 60}
        """.utf8).write(to: URL(fileURLWithPath: config))
        let arguments = ["--root", root, "--tables", scratch.path("tables"), "--config", config,
                         "--preset", "card:160x120:fill", "--preset", "box:200x200:fit"]
        let server = try await Server(arguments, scratch: scratch, environment: ["TESSERA_MAX_OUTPUT_PIXELS": "90000"])
        let encoded = names[0].replacingOccurrences(of: " ", with: "%20")
        let card = try await server.get("/v1/card/\(encoded)")
        #expect(card.status == 200)
        #expect(card.headers["cache-control"] == "public, max-age=60")   // from the config file
        #expect(card.headers["vary"] == "Accept")
        #expect(card.headers["x-tessera-cache"] == "produced")
        let cardImage = try ImageDecoder().decode(Data(card.body))
        #expect(card.body.starts(with: [0xFF, 0xD8, 0xFF]))
        #expect(PixelSize(width: cardImage.width, height: cardImage.height) == PixelSize(width: 160, height: 120))
        let box = try await server.get("/v1/box/\(encoded)", headers: ["Accept": "image/webp,*/*"])
        #expect(box.body.starts(with: Array("RIFF".utf8)))
        let boxImage = try ImageDecoder().decode(Data(box.body))
        #expect(max(boxImage.width, boxImage.height) == 200)
        #expect(abs(Double(boxImage.width) / Double(boxImage.height) - Double(source.width) / Double(source.height)) < 0.02)
        let etag = try #require(card.headers["etag"])
        #expect(try await server.get("/v1/card/\(encoded)", headers: ["If-None-Match": etag]).status == 304)
        let resized = try await server.get("/v1/resize?src=\(encoded)&w=300&h=300&mode=fill&fmt=png")
        #expect(resized.body.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(try ImageDecoder().decode(Data(resized.body)).width == 300)
        let tooLarge = try await server.get("/v1/resize?src=\(encoded)&w=400&h=400")   // the environment's limit
        #expect(tooLarge.status == 400)
        #expect(try await server.get("/v1/card/..%2f..%2fetc%2fpasswd").status == 400)
        let metrics = try await server.get("/metrics")
        #expect(metrics.text.contains("tessera_table_misses_total 2"))
        let exit = await server.terminate()
        #expect(exit.status == 0)
        #expect(exit.signal == nil)
        #expect(server.log.contains("cache=produced"))
        #expect(server.log.contains("latency_ms="))

        // A new process answers from the tables it left: no decode.
        let again = try await Server(arguments, scratch: scratch)
        let hit = try await again.get("/v1/card/\(encoded)")
        #expect(hit.headers["x-tessera-cache"] == "table")
        #expect(hit.headers["etag"] == etag)
        let metricsAgain = try await again.get("/metrics")
        #expect(metricsAgain.text.contains("tessera_table_hits_total 1"))
        #expect(!metricsAgain.text.contains("tessera_decode_seconds_count 1"))
        #expect(await again.terminate().status == 0)
    }

    @Test func sigtermUnderLoadLetsInFlightRequestsFinish() async throws {
        let scratch = try ScratchDirectory("serve-sigterm")
        let (root, _) = try Self.photoRoot(scratch)
        let origin = try await Origin.start()
        let gate = OriginGate()
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        origin.set("/held.jpg", .init(body: Array(try Data(contentsOf: photo)), gate: gate))
        defer { gate.open() }
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--allow-host", "127.0.0.1",
                                       "--allow-range", "127.0.0.1/32"], scratch: scratch)
        let count = 20
        let requests = (0..<count).map { index in
            Task { try await server.get("/v1/resize?src=\(origin.url("/held.jpg").absoluteString)&w=\(100 + index)&h=100") }
        }
        // Every request is in the server (held by the origin's gate) before SIGTERM.
        await origin.waitForArrivals("/held.jpg")
        while true {
            let metrics = try await server.get("/metrics")
            if metrics.text.contains("tessera_requests_in_flight \(count)") { break }
            await Task.yield()
        }
        kill(server.process.pid, SIGTERM)
        gate.open()
        var statuses: [Int] = []
        for request in requests { statuses.append(try await request.value.status) }
        #expect(statuses == Array(repeating: 200, count: count))
        let exit = await server.process.wait()
        #expect(exit.status == 0)
        #expect(exit.signal == nil)
        await origin.stop()
    }
}
