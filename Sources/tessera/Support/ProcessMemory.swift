import Foundation

/// This process's memory as Linux reports it in `/proc/self/smaps_rollup` (kilobytes → bytes).
struct ProcessMemory: Codable {
    /// Resident set size.
    var rss: Int
    /// Pages only this process maps that it has written to (heap, and written pages of private
    /// mappings or of shared file mappings no other process maps).
    var privateDirty: Int
    /// Resident pages this process alone maps and has not written (e.g. read pages of a mapped file).
    var privateClean: Int
    /// Resident pages mapped by other processes too and not written.
    var sharedClean: Int

    /// Reads the current values; zeros where the file is unavailable.
    static func current() -> ProcessMemory {
        parse((try? String(contentsOfFile: "/proc/self/smaps_rollup", encoding: .utf8)) ?? "")
    }

    /// Parses smaps_rollup text.
    static func parse(_ text: String) -> ProcessMemory {
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count >= 2, parts[0].hasSuffix(":"), let kb = Int(parts[1]) else { continue }
            values[String(parts[0].dropLast())] = kb * 1024
        }
        return ProcessMemory(rss: values["Rss"] ?? 0, privateDirty: values["Private_Dirty"] ?? 0,
                             privateClean: values["Private_Clean"] ?? 0, sharedClean: values["Shared_Clean"] ?? 0)
    }

    /// The difference `self − earlier`.
    func delta(since earlier: ProcessMemory) -> ProcessMemory {
        ProcessMemory(rss: rss - earlier.rss, privateDirty: privateDirty - earlier.privateDirty,
                      privateClean: privateClean - earlier.privateClean, sharedClean: sharedClean - earlier.sharedClean)
    }

    /// Megabytes with one decimal.
    static func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
}
