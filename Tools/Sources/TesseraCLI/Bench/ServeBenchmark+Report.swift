import Foundation
import TesseraBenchSupport
import TesseraMeasurement
import TesseraServer
@_spi(Internal) import TesseraImaging

/// `tessera bench serve`'s report: the measurements of interleaved rounds, their ratios and targets, and
/// the printed table.
extension ServeBenchmark {
    static func measurement(_ server: String, _ workload: String, _ rounds: [ServeBenchLoad.Round], peak: Int) -> Measurement {
        let cpu = rounds.compactMap(\.cpuMicrosecondsPerRequest)
        let mixes = rounds.compactMap(\.answers)
        var answers: ServeBenchLoad.AnswerMix?
        if !mixes.isEmpty {
            let count = mixes.map { $0.formats.values.reduce(0, +) }.reduce(0, +)
            var merged = ServeBenchLoad.AnswerMix([])
            merged.formats = mixes.reduce(into: [:]) { all, mix in all.merge(mix.formats, uniquingKeysWith: +) }
            merged.meanBytes = count == 0 ? 0 : mixes.map { $0.meanBytes * Double($0.formats.values.reduce(0, +)) }.reduce(0, +) / Double(count)
            answers = merged
        }
        return Measurement(server: server, workload: workload, requestsPerSecond: Summary(rounds.map(\.requestsPerSecond)).median,
                           p50Milliseconds: Summary(rounds.map(\.p50Milliseconds)).median, p99Milliseconds: Summary(rounds.map(\.p99Milliseconds)).median,
                           peakRSSBytes: peak, errors: rounds.map(\.errors).reduce(0, +),
                           cpuMicrosecondsPerRequest: cpu.isEmpty ? nil : Summary(cpu).median, answers: answers, rounds: rounds)
    }

    /// `alsoHot` is `--also-hot`'s counts, as `run()` parsed them; `coldRequests` the URLs of a cold round.
    func makeReport(files: Int, coldRequests: Int, seconds: Int, alsoHot alsoHotCounts: [Int], skipped: [String], measurements: [Measurement],
                    servers: [Server]) -> Report {
        func rate(_ server: String, _ workload: String) -> Double? {
            measurements.first { $0.server == server && $0.workload == workload }.map(\.requestsPerSecond)
        }
        var ratios: [String: Double] = [:]
        for (workload, other) in [("hot", "thumbor"), ("hot", "thumbor-result-storage"), ("hot", "nginx"), ("cold", "thumbor"),
                                  ("cold", "thumbor-result-storage"), ("hot", "tessera-baseline"), ("cold", "tessera-baseline")] {
            if let a = rate("tessera", workload), let b = rate(other, workload), b > 0 { ratios["\(workload) tessera/\(other)"] = a / b }
        }
        // The further hot sets against nginx (and an earlier build) on the same set.
        for count in alsoHotCounts {
            for other in ["nginx", "tessera-baseline"] {
                if let a = rate("tessera", "hot-\(count)"), let b = rate(other, "hot-\(count)"), b > 0 { ratios["hot-\(count) tessera/\(other)"] = a / b }
            }
        }
        // Over S3 against over files: what reading the sources from a bucket costs.
        for workload in ["hot", "cold"] {
            if let a = rate("tessera-s3", workload), let b = rate("tessera", workload), b > 0 { ratios["\(workload) tessera-s3/tessera"] = a / b }
        }
        var targets: [Target] = []
        // The targets are against thumbor as it ships; the same goals against thumbor with its result
        // storage on are listed too, so a reader sees both verdicts.
        for (name, goal) in [("hot tessera/thumbor", 20.0), ("hot tessera/thumbor-result-storage", 20.0), ("hot tessera/nginx", 0.8),
                             ("cold tessera/thumbor", 3.0), ("cold tessera/thumbor-result-storage", 3.0)] {
            if let value = ratios[name] { targets.append(Target(name: name, goal: "≥ \(goal)", value: value, met: value >= goal)) }
        }
        // Against an earlier build: no slower, within the rounds' noise.
        for name in ["hot tessera/tessera-baseline", "cold tessera/tessera-baseline"] {
            if let value = ratios[name] { targets.append(Target(name: name, goal: "≥ 0.95", value: value, met: value >= 0.95)) }
        }
        if let hot = measurements.first(where: { $0.server == "tessera" && $0.workload == "hot" }) {
            targets.append(Target(name: "hot tessera p99 ms at \(connections) connections", goal: "< 5", value: hot.p99Milliseconds,
                                  met: hot.p99Milliseconds < 5))
        }
        // A first visit waits less for Tessera than for thumbor: the cold pass's median latency.
        if let cold = measurements.first(where: { $0.server == "tessera" && $0.workload == "cold" }),
           let peer = measurements.first(where: { $0.server == "thumbor" && $0.workload == "cold" }) {
            targets.append(Target(name: "cold tessera p50 ms", goal: String(format: "< thumbor's %.1f", peer.p50Milliseconds),
                                  value: cold.p50Milliseconds, met: cold.p50Milliseconds < peer.p50Milliseconds))
        }
        return Report(directory: directory, source: nil, s3: nil, accept: accept.isEmpty ? nil : accept, sources: files, hotThumbnails: hot,
                      alsoHotThumbnails: alsoHot == nil ? nil : alsoHotCounts, thumbnail: size, connections: connections, threads: threads,
                      durationSeconds: seconds, rounds: rounds, coldConcurrency: coldConcurrency,
                      coldRequests: coldRequests, cores: ParallelismLimit.coreCount,
                      thumborProcesses: thumborProcesses, sourceCheckIntervalSeconds: sourceCheckInterval, skipped: skipped, servers: servers, measurements: measurements,
                      ratios: ratios, targets: targets)
    }

    static func print(_ report: Report) {
        Swift.print("Serve benchmark: \(report.directory), \(report.sources) sources, \(report.thumbnail)x\(report.thumbnail) fill; "
            + "hot: \(report.hotThumbnails) thumbnails, wrk -t\(report.threads) -c\(report.connections) -d\(report.durationSeconds)s; "
            + "cold: \(report.coldRequests) URLs a round, \(report.coldConcurrency) clients; median of \(report.rounds) interleaved rounds; \(report.cores) cores; "
            + "file checks reused for \(report.sourceCheckIntervalSeconds) s; Accept: \(report.accept ?? "none")")
        Terminal.table(["server", "workload", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "peak RSS MiB", "errors", "answers (formats; mean size)"],
                       report.measurements.map { m in
            [m.server, m.workload, String(format: m.requestsPerSecond < 100 ? "%.2f" : "%.0f", m.requestsPerSecond), String(format: "%.2f", m.p50Milliseconds),
             String(format: "%.2f", m.p99Milliseconds), m.cpuMicrosecondsPerRequest.map { String(format: "%.1f", $0) } ?? "-",
             String(format: "%.1f", Double(m.peakRSSBytes) / 1_048_576), "\(m.errors)", m.answers?.description ?? "-"]
        })
        Swift.print("")
        if let s3 = report.s3 {
            Swift.print("tessera-s3: the sources in moto \(s3.motoVersion) on 127.0.0.1, bucket \(s3.bucket)/\(s3.prefix): \(s3.objects) objects, "
                + String(format: "%.1f MiB uploaded in %.1f s", Double(s3.bytes) / 1_048_576, s3.uploadSeconds))
            for workload in ["hot", "cold"] {
                if let ratio = report.ratios["\(workload) tessera-s3/tessera"] { Swift.print(String(format: "\(workload) tessera-s3/tessera: %.2f", ratio)) }
            }
            Swift.print("")
        }
        Terminal.table(["target", "goal", "value", "met"], report.targets.map { [$0.name, $0.goal, String(format: "%.2f", $0.value), $0.met ? "yes" : "NO"] })
        for server in report.servers { Swift.print("\(server.name) (\(server.version)): \(server.verifiedImages) thumbnails verified") }
        for reason in report.skipped { Swift.print("skipped: \(reason)") }
    }
}
