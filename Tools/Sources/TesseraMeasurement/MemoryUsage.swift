import Foundation

/// The memory a process uses, as Linux reports it in `/proc/<pid>/smaps_rollup`: resident pages and
/// the dirty pages no other process shares (what Fast Image Cache's demo calls private memory).
///
/// Pages of a `MAP_SHARED` file mapping count as private dirty while this process alone has them
/// mapped and has written them, and as private clean once they are clean (for example an image
/// table reopened by a new process: its pages come from the page cache and are never written).
public struct MemoryUsage: Sendable, Hashable, Codable {
    /// Resident set size in bytes (`Rss`).
    public var residentBytes: Int
    /// Private dirty bytes (`Private_Dirty`).
    public var privateDirtyBytes: Int
    /// Private clean bytes (`Private_Clean`).
    public var privateCleanBytes: Int

    /// Creates a value.
    public init(residentBytes: Int, privateDirtyBytes: Int, privateCleanBytes: Int = 0) {
        self.residentBytes = residentBytes
        self.privateDirtyBytes = privateDirtyBytes
        self.privateCleanBytes = privateCleanBytes
    }

    /// Parses the text of `smaps_rollup` (or the sum of every mapping's lines in `smaps`): lines such
    /// as `Rss:  1234 kB`. `nil` when no `Rss` line is present.
    public init?(smaps text: String) {
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let key = String(line[..<colon])
            guard key == "Rss" || key == "Private_Dirty" || key == "Private_Clean" else { continue }
            let fields = line[line.index(after: colon)...].split(separator: " ", omittingEmptySubsequences: true)
            guard let number = fields.first.flatMap({ Int($0) }) else { continue }
            let unit = fields.count > 1 ? fields[1].lowercased() : "b"
            let multiplier = unit == "kb" ? 1024 : unit == "mb" ? 1 << 20 : 1
            values[key, default: 0] += number * multiplier
        }
        guard let rss = values["Rss"] else { return nil }
        self.init(residentBytes: rss, privateDirtyBytes: values["Private_Dirty"] ?? 0,
                  privateCleanBytes: values["Private_Clean"] ?? 0)
    }

    /// The calling process's usage, read from `/proc/self/smaps_rollup`; `nil` where it is unavailable.
    public static func current() -> MemoryUsage? {
        guard let text = try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8) else { return nil }
        return MemoryUsage(smaps: text)
    }

    /// `self − earlier`, field by field (negative when memory was returned).
    public func delta(since earlier: MemoryUsage) -> MemoryUsage {
        MemoryUsage(residentBytes: residentBytes - earlier.residentBytes,
                    privateDirtyBytes: privateDirtyBytes - earlier.privateDirtyBytes,
                    privateCleanBytes: privateCleanBytes - earlier.privateCleanBytes)
    }
}
