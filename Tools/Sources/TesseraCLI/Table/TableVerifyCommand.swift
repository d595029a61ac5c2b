import ArgumentParser
import Foundation
import Tessera

/// `tessera table verify --dir D`.
struct TableVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every entry's header and pixel checksum; exit 1 naming damaged entries."
    )

    @Option(help: "Directory of the tables.") var dir: String

    func run() throws {
        var damagedTotal = 0
        for table in try TableDirectory.open(dir) {
            let report = table.verify()
            damagedTotal += report.damaged.count
            print("\(table.format.name): \(report.checkedEntries) entries checked, \(report.damaged.count) damaged")
            for damage in report.damaged {
                print("  damaged: \(damage)")
            }
        }
        if damagedTotal > 0 { throw ExitCode(1) }
    }
}
