import ArgumentParser
import Tessera

/// The `tessera` command-line tool.
@main
struct TesseraCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tessera",
        abstract: "A fast, persistent image cache: decode once, keep pixels in memory-mapped tables.",
        subcommands: [ProbeCommand.self, ThumbnailCommand.self, TableCommand.self, FetchCommand.self, CacheCommand.self, BenchCommand.self, DemoCommand.self, ServeCommand.self, HealthCommand.self]
    )
}
