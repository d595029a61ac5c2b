import TesseraImaging
import TesseraTables
import Foundation

/// One reading of the kernel's memory-pressure files, and how bad it is compared with the previous one.
///
/// Two sources, both plain text:
/// - cgroup v2 `memory.events`: cumulative counters, one `name value` per line
///   (`low 0`, `high 12`, `max 3`, `oom 0`, `oom_kill 0`). `high` grows when the group is throttled above
///   its `memory.high`; `max`, `oom` and `oom_kill` when it hits its hard limit.
/// - pressure-stall information (`memory.pressure` of the cgroup, or `/proc/pressure/memory` for the
///   whole machine): `some avg10=1.23 avg60=0.50 avg300=0.10 total=123456` and the same for `full`; the
///   averages are the percentage of wall time in which some (or all) tasks waited for memory.
public struct MemoryPressureSample: Sendable, Hashable {
    /// The `memory.events` counters by name (empty when the file was unreadable).
    public var events: [String: Int]
    /// `some avg10` of the pressure file: percent of the last 10 s in which at least one task stalled.
    public var someAverage10: Double?
    /// `full avg10`: percent of the last 10 s in which every non-idle task stalled.
    public var fullAverage10: Double?

    /// Creates a sample.
    public init(events: [String: Int] = [:], someAverage10: Double? = nil, fullAverage10: Double? = nil) {
        self.events = events
        self.someAverage10 = someAverage10
        self.fullAverage10 = fullAverage10
    }

    /// Reads a sample from the text of a `memory.events` file and of a pressure file (either may be `nil`).
    public init(eventsText: String?, pressureText: String?) {
        self.init(events: eventsText.map(Self.parseEvents) ?? [:])
        if let pressureText {
            let pressure = Self.parsePressure(pressureText)
            someAverage10 = pressure["some"]?["avg10"]
            fullAverage10 = pressure["full"]?["avg10"]
        }
    }

    /// Parses `memory.events`: `name value` per line; malformed lines are skipped.
    public static func parseEvents(_ text: String) -> [String: Int] {
        var result: [String: Int] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2, let value = Int(fields[1]) else { continue }
            result[String(fields[0])] = value
        }
        return result
    }

    /// Parses a pressure-stall file into `["some": ["avg10": …, "avg60": …, "avg300": …, "total": …], "full": …]`.
    public static func parsePressure(_ text: String) -> [String: [String: Double]] {
        var result: [String: [String: Double]] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let kind = fields.first, kind == "some" || kind == "full" else { continue }
            var values: [String: Double] = [:]
            for field in fields.dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1)
                if pair.count == 2, let value = Double(pair[1]) { values[String(pair[0])] = value }
            }
            result[String(kind)] = values
        }
        return result
    }

    /// How bad this sample is after `previous` (counters are cumulative, so only their growth counts;
    /// without a previous sample only the stall averages count).
    ///
    /// - ``MemoryPressureLevel/critical``: `max`, `oom` or `oom_kill` grew, or `full avg10` ≥ `fullThreshold`.
    /// - ``MemoryPressureLevel/moderate``: `high` grew, or `some avg10` ≥ `someThreshold`.
    public func level(after previous: MemoryPressureSample?, someThreshold: Double, fullThreshold: Double) -> MemoryPressureLevel {
        func grew(_ name: String) -> Bool {
            guard let previous, let now = events[name], let before = previous.events[name] else { return false }
            return now > before
        }
        if grew("max") || grew("oom") || grew("oom_kill") || (fullAverage10 ?? 0) >= fullThreshold { return .critical }
        if grew("high") || (someAverage10 ?? 0) >= someThreshold { return .moderate }
        return .normal
    }
}
