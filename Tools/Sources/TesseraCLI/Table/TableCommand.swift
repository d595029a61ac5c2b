import ArgumentParser

/// `tessera table …`: fill, read, inspect and verify image tables.
struct TableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table",
        abstract: "Image tables: memory-mapped files of fixed-size decoded images.",
        subcommands: [TableIngestCommand.self, TableGetCommand.self, TableInspectCommand.self, TableVerifyCommand.self, TableCompactCommand.self]
    )
}
