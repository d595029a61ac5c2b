import Foundation
import Testing
import TesseraTestSupport

/// `tessera serve`'s connection limits (`--idle-timeout`, `--header-timeout`, `--max-connections`), its
/// metrics listener (`--metrics-listen`) and its JSON logs (`--log-format json`), on the release binary
/// over real sockets to 127.0.0.1.
@Suite("tessera serve connections, release binary", .serialized,
       .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ServeConnectionEndToEndTests {
    typealias Server = ServeEndToEndTests.Server

    static let healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    static let healthBody = "{\"status\":\"ok\"}"

    /// A root with nothing in it (the connection tests only ask for `/healthz`).
    static func emptyRoot(_ scratch: ScratchDirectory) throws -> String {
        let root = scratch.path("root")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        return root
    }

    /// Descriptors the process `pid` has open.
    static func descriptors(of pid: pid_t) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// Raises this process's soft descriptor limit to its hard limit; the server, spawned after, inherits it.
    static func raiseDescriptorLimit(to needed: Int) throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        try #require(Int(limit.rlim_cur) >= needed, "the descriptor limit (\(limit.rlim_cur)) is below \(needed)")
    }

    /// Whether `condition` holds within `limit`, checked every 20 ms (a bounded wait on a condition).
    static func eventually(within limit: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            if condition() { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))   // pacing between checks, not synchronisation
        }
    }

    /// Whether `bytes` hold a whole `/healthz` answer.
    static func isHealthAnswer(_ bytes: [UInt8]) -> Bool { String(decoding: bytes, as: UTF8.self).hasSuffix(healthBody) }

    /// Sends `GET /healthz` on `socket` and returns the answer's status line and whether its body is `{"status":"ok"}`.
    static func askHealth(_ socket: LoopbackSocket) throws -> (statusLine: String, ok: Bool, closed: Bool) {
        try socket.send(healthz)
        let (bytes, closed) = socket.receive(until: isHealthAnswer, timeout: .seconds(10))
        let text = String(decoding: bytes, as: UTF8.self)
        return (text.components(separatedBy: "\r\n").first ?? "", isHealthAnswer(bytes), closed)
    }

    @Test("5,000 idle connections: a new client is answered at once, then the idle timeout closes them all")
    func idleConnectionsCloseAfterTheIdleTimeout() async throws {
        let count = 5000
        try Self.raiseDescriptorLimit(to: count + 200)
        let scratch = try ScratchDirectory("serve-idle")
        // Long enough for the server to accept all of them before the first one's idle time is up, even
        // while other tests hold both cores (accepting 5,000 then takes several seconds).
        let idle = 12
        let server = try await Server(["--root", try Self.emptyRoot(scratch), "--tables", scratch.path("tables"), "--idle-timeout", "\(idle)"],
                                      scratch: scratch)
        let pid = server.process.pid
        let baseline = Self.descriptors(of: pid)
        let start = ContinuousClock.now
        let port = server.port
        let sockets = try await onOwnThread { try (0..<count).map { _ in try LoopbackSocket.connect(port: port) } }
        defer { for socket in sockets { socket.close() } }
        let opened = ContinuousClock.now - start
        // The server holds every one of them (accepted, a descriptor each) ...
        let allOpen = await Self.eventually(within: .seconds(idle)) { Self.descriptors(of: pid) >= baseline + count }
        #expect(allOpen, "server descriptors \(Self.descriptors(of: pid)), baseline \(baseline), \(count) connections opened in \(opened)")
        // ... and still answers a new client at once: timed on the client's own thread, from its connect to
        // the end of the answer, so that a wait of this test's task for the cooperative pool (busy with the
        // other tests) is not counted as the server's.
        let (health, answerTime) = try await onOwnThread { () throws -> (RawHTTP.Response, Duration) in
            let asked = ContinuousClock.now
            let response = try RawHTTP.getBlocking(port: port, "/healthz")
            return (response, ContinuousClock.now - asked)
        }
        #expect(health.status == 200)
        #expect(health.text == Self.healthBody)
        #expect(answerTime < .seconds(1), "answered in \(answerTime) with \(count) idle connections open")
        // Then the idle timeout closes them: the server's descriptors fall back to the baseline ...
        let closed = await Self.eventually(within: .seconds(idle + 30)) { Self.descriptors(of: pid) <= baseline + 5 }
        let closedAfter = ContinuousClock.now - start
        #expect(closed, "server descriptors \(Self.descriptors(of: pid)), baseline \(baseline)")
        #expect(closedAfter >= .seconds(idle), "closed \(closedAfter) after the first connection, before the idle timeout")
        // ... and every client sees the end of its connection, without an answer.
        var ended = 0
        for socket in sockets where socket.receive(timeout: .seconds(2)) == .closed { ended += 1 }
        #expect(ended == count)
        print("idle connections: \(count) opened in \(opened), /healthz answered in \(answerTime), all closed \(closedAfter) after the first connection (idle timeout \(idle) s)")
        #expect(await server.terminate().status == 0)
    }

    @Test("an unfinished head is closed after the header timeout; a silent connection waits for the idle timeout")
    func headerTimeoutClosesSlowHeadsOnly() async throws {
        let scratch = try ScratchDirectory("serve-header")
        let headerTimeout = 1
        let server = try await Server(["--root", try Self.emptyRoot(scratch), "--tables", scratch.path("tables"),
                                       "--header-timeout", "\(headerTimeout)", "--idle-timeout", "30"], scratch: scratch)
        let silent = try LoopbackSocket.connect(port: server.port)
        defer { silent.close() }
        let slow = try LoopbackSocket.connect(port: server.port)
        defer { slow.close() }
        let trickling = try LoopbackSocket.connect(port: server.port)
        defer { trickling.close() }

        let start = ContinuousClock.now
        try slow.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")   // no blank line: the head never ends
        // A client that keeps sending a byte of its head every 200 ms gets no more time for it.
        let head = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + String(repeating: "a", count: 200))
        var sent = 0
        var trickleEnded: Duration?
        while trickleEnded == nil, ContinuousClock.now - start < .seconds(headerTimeout + 10) {
            if sent < head.count {
                try? trickling.send(String(head[sent]))
                sent += 1
            }
            if trickling.receive(timeout: .milliseconds(200)) == .closed { trickleEnded = ContinuousClock.now - start }
        }
        let slowResult = slow.receive(until: { _ in false }, timeout: .seconds(headerTimeout + 10))
        let slowEnded = ContinuousClock.now - start
        #expect(slowResult.closed && slowResult.bytes.isEmpty, "the unfinished head got \(slowResult.bytes.count) bytes, closed: \(slowResult.closed)")
        #expect(slowEnded >= .seconds(headerTimeout) && slowEnded < .seconds(headerTimeout + 5), "closed after \(slowEnded)")
        let trickle = try #require(trickleEnded, "the trickling head was not closed")
        #expect(trickle >= .seconds(headerTimeout) && trickle < .seconds(headerTimeout + 5), "closed after \(trickle), \(sent) bytes sent")

        // The connection that sent nothing for longer than the header timeout is open and still answered.
        #expect(ContinuousClock.now - start > .seconds(headerTimeout))
        #expect(silent.receive() == .nothing)
        let answer = try Self.askHealth(silent)
        #expect(answer.statusLine == "HTTP/1.1 200 OK")
        #expect(answer.ok)
        #expect(!answer.closed)
        print("header timeout \(headerTimeout) s: unfinished head closed after \(slowEnded), trickling head after \(trickle)")
        #expect(await server.terminate().status == 0)
    }

    @Test("--max-connections 10: the 11th connection is closed without an answer, and accepted again once some close")
    func connectionsAboveTheLimitAreRefused() async throws {
        let scratch = try ScratchDirectory("serve-max")
        let server = try await Server(["--root", try Self.emptyRoot(scratch), "--tables", scratch.path("tables"), "--max-connections", "10"],
                                      scratch: scratch)
        let port = server.port
        /// A new keep-alive connection answered once (so accepted and counted), retried for up to 10 s: the
        /// server counts a connection closed a moment after the client has seen it close.
        func answeredConnection() throws -> LoopbackSocket? {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                let socket = try LoopbackSocket.connect(port: port)
                if let answer = try? Self.askHealth(socket), answer.statusLine == "HTTP/1.1 200 OK", answer.ok, !answer.closed { return socket }
                socket.close()
            }
            return nil
        }
        // Ten keep-alive connections, each answered once: all ten are accepted and counted.
        var open: [LoopbackSocket] = []
        defer { for socket in open { socket.close() } }
        for _ in 0..<10 { open.append(try #require(try answeredConnection(), "connection \(open.count + 1) of 10 was not answered")) }
        // The eleventh: the handshake succeeds (the kernel's), then the server closes it unanswered.
        let refused = try LoopbackSocket.connect(port: server.port)
        defer { refused.close() }
        try? refused.send(Self.healthz)
        let result = refused.receive(until: { _ in false }, timeout: .seconds(10))
        #expect(result.closed, "the 11th connection stayed open")
        #expect(result.bytes.isEmpty, "the 11th connection got \(result.bytes.count) bytes")
        // The ten are still served.
        let again = try Self.askHealth(open[0])
        #expect(again.statusLine == "HTTP/1.1 200 OK" && again.ok)

        // Three close; a new connection is answered again once the server has seen them go.
        for socket in open.suffix(3) { socket.close() }
        open.removeLast(3)
        let renewed = try answeredConnection()
        #expect(renewed != nil, "no new connection was answered after three closed")
        if let renewed { open.append(renewed) }
        #expect(await server.terminate().status == 0)
    }

    @Test("--metrics-listen: /metrics on its own listener, 404 on the image listener")
    func metricsOnTheirOwnListener() async throws {
        let scratch = try ScratchDirectory("serve-metrics")
        let (root, names) = try ServeEndToEndTests.photoRoot(scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--metrics-listen", "127.0.0.1:0"], scratch: scratch)
        #expect(await server.output.wait(for: "tessera serve: metrics on 127.0.0.1:", timeout: .seconds(30)))
        let line = try #require(server.output.lines(containing: "tessera serve: metrics on 127.0.0.1:").first)
        let metricsPort = try #require(Int(line.split(separator: ":").last ?? ""), "no port in '\(line)'")
        #expect(metricsPort != server.port && metricsPort > 0)

        let image = try await server.get("/v1/thumb/\(names[0].replacingOccurrences(of: " ", with: "%20"))")
        #expect(image.status == 200)
        let metrics = try await RawHTTP.get(port: metricsPort, "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(metrics.text.contains("tessera_requests_total{"))
        #expect(metrics.text.contains("# TYPE tessera_requests_total counter"))
        #expect(try await RawHTTP.get(port: metricsPort, "/healthz").text == Self.healthBody)
        #expect(try await RawHTTP.get(port: metricsPort, "/v1/thumb/\(names[0].replacingOccurrences(of: " ", with: "%20"))").status == 404)
        #expect(try await server.get("/metrics").status == 404)
        let exit = await server.terminate()
        #expect(exit.status == 0)
        #expect(exit.signal == nil)
    }

    @Test("--log-format json: one JSON object per line, the request line with its path and status")
    func jsonLogs() async throws {
        let scratch = try ScratchDirectory("serve-json-log")
        let (root, names) = try ServeEndToEndTests.photoRoot(scratch)
        let server = try await Server(["--root", root, "--tables", scratch.path("tables"), "--log-format", "json"], scratch: scratch)
        let path = "/v1/thumb/\(names[0].replacingOccurrences(of: " ", with: "%20"))"
        #expect(try await server.get(path).status == 200)
        #expect(try await server.get("/v1/thumb/missing.jpg").status == 404)
        #expect(await server.terminate().status == 0)
        // Standard output has the listening line; every other line is a JSON object.
        let lines = server.log.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("tessera serve: ") }
        #expect(!lines.isEmpty)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not a JSON object: \(line)")
            if let object { objects.append(object) }
        }
        for object in objects {
            #expect(object["timestamp"] is String && object["level"] is String && object["label"] is String && object["message"] is String)
        }
        let requests = objects.filter { $0["message"] as? String == "request" }
        let served = requests.first { $0["path"] as? String == path }
        #expect(served?["status"] as? String == "200", "request lines: \(requests)")
        #expect(requests.contains { $0["path"] as? String == "/v1/thumb/missing.jpg" && $0["status"] as? String == "404" })
        let timestamp = try #require(served?["timestamp"] as? String)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "timestamp \(timestamp)")

        let bad = try await ReleaseCLI.run(["serve", "--root", root, "--log-format", "xml"])
        #expect(bad.status != 0)
        #expect(bad.errors.contains("--log-format 'xml' is not one of text, json"), "the message names the flag and the value: \(bad)")
    }
}
