import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// `scripts/cluster` as operators run it: a real nginx in front of release `tessera serve` nodes, all on 127.0.0.1.
@Suite("scripts/cluster: nginx in front of tessera serve nodes", .enabled(if: ReleaseCLI.isAvailable, "TESSERA_RELEASE_BINARY names the release tessera binary"))
struct ClusterEndToEndTests {
    /// A running `scripts/cluster N`: the front's port and each node's port and pid, from the lines it prints.
    final class Cluster: Sendable {
        let script: ChildProcess
        let front: Int
        let nodes: [(port: Int, pid: pid_t)]

        /// Runs `scripts/cluster count [--root root] arguments…` with this process's environment plus `environment`
        /// (which the script's nodes inherit), and waits until it says `ready`.
        init(_ count: Int, root: String?, arguments: [String], scratch: ScratchDirectory, environment extra: [String: String] = [:]) throws {
            let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/cluster").path
            let (readEnd, writeEnd) = try ChildProcess.makePipe()
            let errors = open(scratch.path("cluster.err"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            defer { close(errors) }
            var environment = ProcessInfo.processInfo.environment
            environment.merge(extra) { $1 }
            environment["TESSERA_BINARY"] = try #require(ReleaseCLI.binary).path
            let rootArguments = root.map { ["--root", $0] } ?? []
            script = try ChildProcess.spawn("/bin/bash", [path, "\(count)"] + rootArguments + arguments, environment: environment,
                                            standardOutput: writeEnd, standardError: errors)
            close(writeEnd)
            let output = FileHandle(fileDescriptor: readEnd, closeOnDealloc: true)
            var text = ""
            while !text.hasSuffix("ready\n") {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            let lines = text.split(separator: "\n")
            nodes = lines.filter { $0.hasPrefix("node ") }.compactMap { line in
                let fields = line.split(separator: " ")   // node I 127.0.0.1:PORT pid PID
                guard fields.count == 5, let port = Int(fields[2].split(separator: ":").last ?? ""), let pid = pid_t(fields[4]) else { return nil }
                return (port, pid)
            }
            let frontLine = lines.first { $0.hasPrefix("front ") }.map(String.init) ?? ""
            front = Int(frontLine.split(separator: ":").last ?? "") ?? 0
            let log = (try? String(contentsOfFile: scratch.path("cluster.err"), encoding: .utf8)) ?? ""
            try #require(text.hasSuffix("ready\n") && nodes.count == count && front > 0, "scripts/cluster printed:\n\(text)\n\(log)")
        }

        /// SIGTERM to the script, which stops nginx and the nodes, and waits for it.
        func stop() -> ChildProcess.Exit {
            kill(script.pid, SIGTERM)
            return script.wait()
        }
    }

    /// Successful image requests and table misses a node has counted (its `/metrics`).
    static func counts(port: Int) async throws -> (ok: Double, misses: Double) {
        let text = try await RawHTTP.get(port: port, "/metrics").text
        var ok = 0.0, misses = 0.0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let value = Double(line.split(separator: " ").last ?? "") ?? 0
            if line.hasPrefix("tessera_requests_total{") && line.contains("status=\"200\"") { ok += value }
            if line.hasPrefix("tessera_table_misses_total") { misses += value }
        }
        return (ok, misses)
    }

    /// One request of the load: when it started relative to the kill, and how it ended.
    struct Outcome { var startedAfterKill: Bool; var status: Int? }

    /// Three nodes behind nginx, its cache off so that every request reaches a node. After every URI has been
    /// requested once, 8 clients loop over 30 photographs × 3 formats; the node that served most is SIGKILLed
    /// halfway. Every request that started once the killed node's port refused connections is answered 200
    /// (nginx retries on the next node); the only failures are requests already under way at the kill, at
    /// most one per client; the two survivors answered most of their requests without a table miss (hit
    /// rate ≥ 90%: only the moved sources are new to them), and they filled the killed node's sources.
    @Test func killingANodeUnderLoadOnlyFailsItsInFlightRequests() async throws {
        let scratch = try ScratchDirectory("cluster")
        let cluster = try Cluster(3, root: RealPhotos.directory.path, arguments: ["--no-proxy-cache", "--", "--preset", "thumb:96x96:fill"],
                                  scratch: scratch)
        defer { _ = cluster.stop() }
        let root = RealPhotos.directory.path + "/"
        let uris = try RealPhotos.all().flatMap { url -> [String] in
            let relative = String(url.path.dropFirst(root.count)).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
            return ["", "?fmt=png", "?fmt=webp"].map { "/v1/thumb/\(relative)\($0)" }
        }
        for uri in uris {
            let response = try await RawHTTP.get(port: cluster.front, uri)
            try #require(response.status == 200 && response.headers["content-type"]?.hasPrefix("image/") == true, "\(uri): \(response)")
        }
        var before: [(ok: Double, misses: Double)] = []
        for node in cluster.nodes { before.append(try await Self.counts(port: node.port)) }
        #expect(before.filter { $0.ok > 0 }.count >= 2, "hashing spreads 30 sources over the nodes: \(before)")
        let victim = before.indices.max { before[$0].ok < before[$1].ok }!

        let killed = LockedValue(false)
        let outcomes = LockedValue([Outcome]())
        let perPhase = 300
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<8 {
                group.addTask {
                    var index = client * 11
                    while true {
                        let done = outcomes.withLock { $0.filter(\.startedAfterKill).count >= perPhase }
                        if done { return }
                        let startedAfterKill = killed.withLock { $0 }
                        let status = try? await RawHTTP.get(port: cluster.front, uris[index % uris.count]).status
                        outcomes.withLock { $0.append(Outcome(startedAfterKill: startedAfterKill, status: status)) }
                        index += 1
                    }
                }
            }
            group.addTask {
                while outcomes.withLock({ $0.count }) < perPhase { await Task.yield() }
                kill(cluster.nodes[victim].pid, SIGKILL)
                // Killed means: its port refuses connections (the kernel closed the listener when the process died).
                while (try? await RawHTTP.get(port: cluster.nodes[victim].port, "/healthz")) != nil { await Task.yield() }
                killed.withLock { $0 = true }
            }
            try await group.waitForAll()
        }

        let all = outcomes.withLock { $0 }
        let after = all.filter(\.startedAfterKill)
        #expect(after.count >= perPhase && after.allSatisfy { $0.status == 200 },
                "requests after the kill: \(after.filter { $0.status != 200 }.count) failed of \(after.count)")
        let failedBefore = all.filter { !$0.startedAfterKill && $0.status != 200 }.count
        #expect(failedBefore <= 8, "only requests in flight at the kill may fail: \(failedBefore)")
        var survivorMisses = 0.0
        for index in cluster.nodes.indices where index != victim {
            let now = try await Self.counts(port: cluster.nodes[index].port)
            let served = now.ok - before[index].ok, misses = now.misses - before[index].misses
            survivorMisses += misses
            #expect(served > 0, "node \(index + 1) kept serving")
            #expect(served == 0 || 1 - misses / served >= 0.9, "node \(index + 1): \(misses) misses in \(served) requests")
        }
        #expect(survivorMisses >= 1, "the survivors took over the killed node's sources and filled their tables")
    }
}
