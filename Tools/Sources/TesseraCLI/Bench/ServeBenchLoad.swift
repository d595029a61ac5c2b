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
        /// Cold rounds: the formats answered and the mean body size (``AnswerMix``).
        var answers: AnswerMix?
    }

    /// What a server answered: how many answers in each format (`image/avif`: 12) and their mean body size,
    /// so that speed bought with bigger files, or another format, shows beside the rate.
    struct AnswerMix: Codable, Equatable {
        var formats: [String: Int]
        var meanBytes: Double

        /// The mix of `answers` (content type and body size each).
        init(_ answers: [(contentType: String, bytes: Int)]) {
            formats = answers.reduce(into: [:]) { $0[$1.contentType, default: 0] += 1 }
            meanBytes = answers.isEmpty ? 0 : Double(answers.map(\.bytes).reduce(0, +)) / Double(answers.count)
        }

        /// `avif 12, webp 3; 9.4 KiB`.
        var description: String {
            let mix = formats.sorted { $0.key < $1.key }.map { "\($0.key.replacingOccurrences(of: "image/", with: "")) \($0.value)" }
            return mix.joined(separator: ", ") + String(format: "; %.1f KiB", meanBytes / 1024)
        }
    }

    /// The sizes a `box`×`box` fill of a source of `source` (its display size) may rightly be: the box, or, for a
    /// source smaller than the box on a side, the box cut to the source at scale 1 (what a service that does not
    /// enlarge answers: Tessera's `fill`); with `enlarging`, the whole box too (a service that upscales: thumbor).
    static func fillSizes(box: Int, source: PixelSize, enlarging: Bool) -> Set<PixelSize> {
        var sizes: Set<PixelSize> = [PixelSize(width: min(box, source.width), height: min(box, source.height))]
        if enlarging { sizes.insert(PixelSize(width: box, height: box)) }
        return sizes
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
        let samples = inParallel(targets.count, threads: concurrency) { index -> (seconds: Double, ok: Bool, type: String, bytes: Int) in
            let begin = Stopwatch.now()
            let response = try? RawHTTP.getBlocking(port: port, targets[index], headers: headers(accept: accept))
            let type = response?.headers["content-type"] ?? ""
            let ok = response.map { $0.status == 200 && type.hasPrefix("image/") } ?? false
            return (Double(Stopwatch.now() - begin) / 1e9, ok, type, response?.body.count ?? 0)
        }
        let seconds = Double(Stopwatch.now() - start) / 1e9
        let latencies = Summary(samples.map(\.seconds))
        return Round(requests: samples.count, seconds: seconds, requestsPerSecond: Double(samples.count) / seconds,
                     p50Milliseconds: latencies.median * 1000, p99Milliseconds: latencies.p99 * 1000, errors: samples.filter { !$0.ok }.count,
                     answers: AnswerMix(samples.filter(\.ok).map { ($0.type, $0.bytes) }))
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

    /// GETs `target` with `accept` and requires a 200 whose body decodes as an image of one of the `expected`
    /// sizes (``fillSizes(box:source:enlarging:)``): returns the body and type.
    static func verifiedThumbnail(port: Int, _ target: String, accept: String, expected: Set<PixelSize>,
                                  server: String) throws -> (body: [UInt8], contentType: String) {
        let response = try RawHTTP.getBlocking(port: port, target, headers: headers(accept: accept))
        let type = response.headers["content-type"] ?? ""
        guard response.status == 200, type.hasPrefix("image/") else {
            throw ValidationError("\(server) answered \(target) with \(response.status) \(type): \(response.text.prefix(200))")
        }
        let info = try ImageDecoder().probe(Data(response.body))
        guard expected.contains(PixelSize(width: info.width, height: info.height)) else {
            let sizes = expected.map { "\($0.width)x\($0.height)" }.sorted().joined(separator: " or ")
            throw ValidationError("\(server) answered \(target) with a \(info.width)x\(info.height) image, not \(sizes)")
        }
        return (response.body, type)
    }
}
