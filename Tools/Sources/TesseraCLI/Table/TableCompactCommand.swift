import ArgumentParser
import Foundation
import Tessera

/// `tessera table compact --dir D`: shrink table files after deletions.
struct TableCompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Move entries into the lowest free slots and truncate each table file after its last entry."
    )

    @Option(help: "Directory of the tables.") var dir: String

    func run() throws {
        for table in try TableDirectory.open(dir) {
            let before = table.usage
            try table.compact()
            let after = table.usage
            print("\(table.format.name): \(after.entryCount) entries, file \(before.fileSize) -> \(after.fileSize) bytes")
        }
    }
}
