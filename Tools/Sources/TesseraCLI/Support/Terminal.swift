import Foundation

/// Output helpers: aligned tables, a progress bar on standard error, JSON on standard output.
enum Terminal {
    /// Prints rows as a left-aligned table with a header rule.
    static func table(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        print(line(header))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "))
        for row in rows { print(line(row)) }
    }

    /// Encodes `value` as pretty JSON (sorted keys) on standard output.
    static func json(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Writes a line to standard error.
    static func error(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// Shows `status` on one line of standard error, redrawn in place, when it is a terminal; `nil`
    /// clears that line.
    static func progress(_ status: String?) {
        guard isatty(2) == 1 else { return }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + (status ?? "")).utf8))
    }

    /// Formats seconds as milliseconds with 3 decimals.
    static func ms(_ seconds: Double) -> String { String(format: "%.3f", seconds * 1000) }
}

/// A one-line progress bar on standard error, redrawn in place; silent when stderr is not a terminal
/// except for a final line.
struct ProgressBar {
    let total: Int
    let label: String
    private let isTerminal = isatty(2) == 1
    private var lastDrawn = -1

    init(total: Int, label: String) {
        self.total = total
        self.label = label
    }

    /// Shows `done` of `total`.
    mutating func update(_ done: Int) {
        guard isTerminal, total > 0 else { return }
        let percent = done * 100 / total
        guard percent != lastDrawn else { return }
        lastDrawn = percent
        let width = 30, filled = width * done / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(done)/\(total)".utf8))
    }

    /// Ends the bar's line.
    func finish() {
        if isTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
