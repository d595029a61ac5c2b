import ArgumentParser
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging
import TesseraBenchSupport

/// The two loads of `bench serve`: wrk cycling through a list of paths (hot), and one request per source
/// from a fixed number of client threads (cold). Every request carries the same `Accept` header (or none).
enum ServeBenchLoad {
    /// The `Accept` header Chrome sends for an image (`<img>`), the default of every request of the bench.
    static let browserAccept = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"

    /// `accept` as request headers: none when it is empty.
    static func headers(accept: String) -> [String: String] {
        accept.isEmpty ? [:] : ["Accept": accept]
    }

    /// One measured run against one server.
    struct Round: Codable {
        var requests: Int
        var seconds: Double
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        /// Responses that were not 2xx/3xx (wrk) or not a 200 image (cold), plus socket errors and timeouts.
        var errors: Int
        /// Hot rounds: the processor time the server's processes used during the round, in microseconds per
        /// request (the round's load and the machine's other work change it far less than the rate).
        var cpuMicrosecondsPerRequest: Double?
    }

    /// wrk's Lua script: every thread reads the paths file (its first argument), starts at a different place
    /// and cycles through it, sending the `Accept` header of its second argument (none when that is empty); at
    /// the end one JSON line with the totals and the latency percentiles (µs) goes to standard output.
    static let wrkScript = """
    local paths = {}
    local headers = {}
    local i = 0
    function init(args)
      for line in io.lines(args[1]) do paths[#paths + 1] = line end
      if args[2] ~= nil and args[2] ~= "" then headers["Accept"] = args[2] end
      i = math.random(#paths)
    end
    function request()
      i = i % #paths + 1
      return wrk.format("GET", paths[i], headers)
    end
    function done(summary, latency, requests)
      local e = summary.errors
      io.write(string.format('WRK-JSON {"requests":%d,"microseconds":%d,"errors":%d,"p50":%d,"p99":%d}\\n',
        summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
        latency:percentile(50), latency:percentile(99)))
    end
    """

    /// Runs `wrk --latency -t threads -c connections -d seconds` against 127.0.0.1:`port`, cycling through `paths`
    /// with `accept` (none when empty).
    static func wrk(port: Int, paths: [String], accept: String, threads: Int, connections: Int, seconds: Int, scratch: URL) throws -> Round {
        let script = scratch.appendingPathComponent("cycle.lua"), list = scratch.appendingPathComponent("paths-\(port).txt")
        try wrkScript.write(to: script, atomically: true, encoding: .utf8)
        try (paths.joined(separator: "\n") + "\n").write(to: list, atomically: true, encoding: .utf8)
        let output = try Worker.output("/usr/bin/wrk", ["--latency", "-t", "\(threads)", "-c", "\(connections)", "-d", "\(seconds)s",
                                                        "--timeout", "10s", "-s", script.path, "http://127.0.0.1:\(port)", "--", list.path, accept])
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
    /// per request) with `accept`: requests per second over the whole pass, latency percentiles of the requests.
    static func pass(port: Int, targets: [String], accept: String, concurrency: Int) -> Round {
        let start = Stopwatch.now()
        let samples = inParallel(targets.count, threads: concurrency) { index -> (seconds: Double, ok: Bool) in
            let begin = Stopwatch.now()
            let response = try? RawHTTP.getBlocking(port: port, targets[index], headers: headers(accept: accept))
            let ok = response.map { $0.status == 200 && ($0.headers["content-type"] ?? "").hasPrefix("image/") } ?? false
            return (Double(Stopwatch.now() - begin) / 1e9, ok)
        }
        let seconds = Double(Stopwatch.now() - start) / 1e9
        let latencies = Summary(samples.map(\.seconds))
        return Round(requests: samples.count, seconds: seconds, requestsPerSecond: Double(samples.count) / seconds,
                     p50Milliseconds: latencies.median * 1000, p99Milliseconds: latencies.p99 * 1000, errors: samples.filter { !$0.ok }.count)
    }

    /// `body(0)` … `body(count - 1)` on `threads` threads (each takes the next index), the results in index order.
    static func inParallel<T: Sendable>(_ count: Int, threads: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let next = LockedValue(0)
        let results = LockedValue([Int: T]())
        let finished = DispatchGroup()
        for _ in 0..<min(threads, count) {
            finished.enter()
            Thread {
                defer { finished.leave() }
                while true {
                    let index = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    guard index < count else { return }
                    let result = body(index)
                    results.withLock { $0[index] = result }
                }
            }.start()
        }
        finished.wait()
        return results.withLock { done in (0..<count).map { done[$0]! } }
    }

    /// GETs `target` with `accept` and requires a 200 whose body decodes as an image of exactly `size`×`size`:
    /// returns the body and type.
    static func verifiedThumbnail(port: Int, _ target: String, accept: String, size: Int, server: String) throws -> (body: [UInt8], contentType: String) {
        let response = try RawHTTP.getBlocking(port: port, target, headers: headers(accept: accept))
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
