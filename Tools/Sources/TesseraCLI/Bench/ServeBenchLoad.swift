import ArgumentParser
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging
import TesseraTestSupport

/// The two loads of `bench serve`: wrk cycling through a list of paths (hot), and one request per source
/// from a fixed number of client threads (cold).
enum ServeBenchLoad {
    /// One measured run against one server.
    struct Round: Codable {
        var requests: Int
        var seconds: Double
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        /// Responses that were not 2xx/3xx (wrk) or not a 200 image (cold), plus socket errors and timeouts.
        var errors: Int
    }

    /// wrk's Lua script: every thread reads the paths file, starts at a different place and cycles through
    /// it; at the end one JSON line with the totals and the latency percentiles (µs) goes to standard output.
    static let wrkScript = """
    local paths = {}
    local i = 0
    function init(args)
      for line in io.lines(args[1]) do paths[#paths + 1] = line end
      i = math.random(#paths)
    end
    function request()
      i = i % #paths + 1
      return wrk.format("GET", paths[i])
    end
    function done(summary, latency, requests)
      local e = summary.errors
      io.write(string.format('WRK-JSON {"requests":%d,"microseconds":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
        summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
        latency:percentile(50), latency:percentile(99)))
    end
    """

    /// Runs `wrk --latency -t threads -c connections -d seconds` against 127.0.0.1:`port`, cycling through `paths`.
    static func wrk(port: Int, paths: [String], threads: Int, connections: Int, seconds: Int, scratch: URL) throws -> Round {
        let script = scratch.appendingPathComponent("cycle.lua"), list = scratch.appendingPathComponent("paths-\(port).txt")
        try wrkScript.write(to: script, atomically: true, encoding: .utf8)
        try (paths.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        let output = try Worker.output("/usr/bin/wrk", ["--latency", "-t", "\(threads)", "-c", "\(connections)", "-d", "\(seconds)s",
                                                        "--timeout", "10s", "-s", script.path, "http://127.0.0.1:\(port)", "--", list.path])
        struct WrkSummary: Decodable { var requests: Int; var microseconds: Int; var errors: Int; var p50: Int; var p99: Int }
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("WRK-JSON ") }),
              let summary = try? JSONDecoder().decode(WrkSummary.self, from: Data(line.dropFirst(9).utf8)), summary.microseconds > 0 else {
            throw ValidationError("wrk gave no summary:\n\(output)")
        }
        let seconds = Double(summary.microseconds) / 1e6
        return Round(requests: summary.requests, seconds: seconds, requestsPerSecond: Double(summary.requests) / seconds,
                     p50Milliseconds: Double(summary.p50) / 1000, p99Milliseconds: Double(summary.p99) / 1000, errors: summary.errors)
    }

    /// Requests every target once from `concurrency` threads (each takes the next target, one connection
    /// per request): requests per second over the whole pass, latency percentiles of the requests.
    static func pass(port: Int, targets: [String], concurrency: Int) -> Round {
        let next = LockedValue(0)
        let results = LockedValue([(seconds: Double, ok: Bool)]())
        let start = Stopwatch.now()
        let finished = DispatchGroup()
        for _ in 0..<min(concurrency, targets.count) {
            finished.enter()
            Thread {
                defer { finished.leave() }
                while true {
                    let index = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < targets.count else { return }
                    let begin = Stopwatch.now()
                    let response = try? RawHTTP.getBlocking(port: port, targets[index])
                    let ok = response.map { $0.status == 200 && ($0.headers["content-type"] ?? "").hasPrefix("image/") } ?? false
                    let seconds = Double(Stopwatch.now() - begin) / 1e9
                    results.withLock { $0.append((seconds, ok)) }
                }
            }.start()
        }
        finished.wait()
        let seconds = Double(Stopwatch.now() - start) / 1e9
        let samples = results.withLock { $0 }
        let latencies = Summary(samples.map(\.seconds))
        return Round(requests: samples.count, seconds: seconds, requestsPerSecond: Double(samples.count) / seconds,
                     p50Milliseconds: latencies.median * 1000, p99Milliseconds: latencies.p99 * 1000, errors: samples.filter { !$0.ok }.count)
    }

    /// GETs `target` and requires a 200 whose body decodes as an image of exactly `size`×`size`: returns the body and type.
    static func verifiedThumbnail(port: Int, _ target: String, size: Int, server: String) throws -> (body: [UInt8], contentType: String) {
        let response = try RawHTTP.getBlocking(port: port, target)
        let type = response.headers["content-type"] ?? ""
        guard response.status == 200, type.hasPrefix("image/") else {
            throw ValidationError("\(server) answered \(target) with \(response.status) \(type): \(response.text.prefix(200))")
        }
        let info = try ImageDecoder().probe(Data(response.body))
        guard info.width == size, info.height == size else {
            throw ValidationError("\(server) answered \(target) with a \(info.width)x\(info.height) image, not \(size)x\(size)")
        }
        return (response.body, type)
    }
}
