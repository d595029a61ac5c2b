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

    /// Parses and runs the command (`AsyncParsableCommand`'s `main(_:)`); `tessera serve` first sets its heap
    /// policy (``HeapPolicy/configureForServing()``) here, on the main thread before any other thread
    /// has allocated: glibc sizes a thread's arena when the thread first allocates, with the top pad of
    /// that moment, and the server's threads start as soon as `run` does.
    static func main() async {
        if CommandLine.arguments.dropFirst().first == ServeCommand.configuration.commandName {
            HeapPolicy.configureForServing()
        }
        await main(nil)
    }
}
