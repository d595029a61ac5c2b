import Foundation

/// Values read out of a Prometheus text exposition (what `/metrics` answers).
enum PrometheusText {
    /// The sum of the samples of the metric `name` whose labels include every pair of `labels` (all of its
    /// samples when `labels` is empty); 0 when there is no such sample.
    static func value(_ text: String, _ name: String, labels: [String: String] = [:]) -> Double {
        var total = 0.0
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            let brace = series.firstIndex(of: "{")
            guard series[..<(brace ?? series.endIndex)] == name[...] else { continue }
            let labelText = brace.map { String(series[$0...]) } ?? ""
            guard labels.allSatisfy({ labelText.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
            total += value
        }
        return total
    }
}
