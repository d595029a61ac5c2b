import ArgumentParser
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging

/// `tessera cache stats|clear [--cache-dir D] [--json]`: the fetch disk cache.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect or empty the disk cache of `tessera fetch`.",
        subcommands: [Stats.self, Clear.self]
    )

    /// The options shared by both subcommands.
    struct Options: ParsableArguments {
        @Option(name: .customLong("cache-dir"), help: "Disk cache directory (default $XDG_CACHE_HOME/tessera/images).")
        var cacheDirectory: String?
        @Flag(help: "Print JSON.") var json = false

        func open() throws -> DiskCache {
            let directory = cacheDirectory.map { URL(fileURLWithPath: $0) } ?? ImageManager.Configuration.defaultDiskDirectory
            return try DiskCache(configuration: DiskCache.Configuration(directory: directory))
        }
    }

    /// What `stats` prints.
    struct StatsReport: Codable {
        var directory: String
        var entries: Int
        var bytes: Int
        var sizeLimit: Int
        var ageLimitSeconds: Double?
        var oldestStoredAt: String?
    }

    /// `tessera cache stats`.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Entries, bytes and limits of the disk cache (read from file metadata only).")
        @OptionGroup var options: Options

        func run() async throws {
            let stats = try options.open().statistics
            let report = StatsReport(directory: stats.directory, entries: stats.count, bytes: stats.totalBytes,
                                     sizeLimit: stats.sizeLimit, ageLimitSeconds: stats.ageLimit?.timeInterval,
                                     oldestStoredAt: stats.oldestStoredAt.map { ISO8601DateFormatter().string(from: $0) })
            if options.json { try Terminal.json(report); return }
            Terminal.table(["directory", "entries", "bytes", "size limit", "age limit", "oldest"], [[
                report.directory, "\(report.entries)", "\(report.bytes)", "\(report.sizeLimit)",
                report.ageLimitSeconds.map { String(format: "%.0f s", $0) } ?? "none", report.oldestStoredAt ?? "-",
            ]])
        }
    }

    /// What `clear` prints.
    struct ClearReport: Codable {
        var directory: String
        var removedEntries: Int
        var removedBytes: Int
    }

    /// `tessera cache clear`.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove every entry of the disk cache.")
        @OptionGroup var options: Options

        func run() async throws {
            let cache = try options.open()
            let before = cache.statistics
            try await cache.removeAll()
            let report = ClearReport(directory: before.directory, removedEntries: before.count, removedBytes: before.totalBytes)
            if options.json { try Terminal.json(report); return }
            print("removed \(report.removedEntries) entries (\(report.removedBytes) bytes) from \(report.directory)")
        }
    }
}
