import Foundation

/// Monotonic time measurement for benchmarks.
enum Stopwatch {
    /// Nanoseconds on the monotonic clock.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `body` once and returns its result and the elapsed seconds.
    static func time<R>(_ body: () throws -> R) rethrows -> (R, Double) {
        let start = now()
        let result = try body()
        return (result, Double(now() - start) / 1e9)
    }

    /// Runs `body` `repetitions` times (after `warmup` untimed runs) and returns each run's seconds.
    static func samples(repetitions: Int, warmup: Int = 1, _ body: () throws -> Void) rethrows -> [Double] {
        for _ in 0..<warmup { try body() }
        var result: [Double] = []
        result.reserveCapacity(repetitions)
        for _ in 0..<repetitions {
            let start = now()
            try body()
            result.append(Double(now() - start) / 1e9)
        }
        return result
    }
}

/// Order statistics of a list of samples.
struct Summary: Codable {
    /// Number of samples.
    var count: Int
    /// Median.
    var median: Double
    /// 99th percentile (nearest rank).
    var p99: Double
    /// Smallest sample.
    var min: Double

    init(_ samples: [Double]) {
        let sorted = samples.sorted()
        count = sorted.count
        median = sorted.isEmpty ? 0 : (sorted.count % 2 == 1 ? sorted[sorted.count / 2]
                                      : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2)
        p99 = sorted.isEmpty ? 0 : sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)]
        min = sorted.first ?? 0
    }
}
