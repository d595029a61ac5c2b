import ArgumentParser

/// `tessera bench …`: reproducible measurements behind every speed claim.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmarks. Each reports medians and a ratio against the obvious alternative measured in the same run.",
        subcommands: [DecodeBenchmark.self, IngestBenchmark.self, RetrievalBenchmark.self, FormatsBenchmark.self, FetchBenchmark.self,
                      ColourBenchmark.self, ServeBenchmark.self, AnimationBenchmark.self, PeersCommand.self]
    )
}
