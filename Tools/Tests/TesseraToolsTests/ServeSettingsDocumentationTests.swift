import Foundation
import Testing
import TesseraServer

/// docs/SERVING.md's configuration table is made from `ServeSettings.declarations`, the one list of
/// `tessera serve`'s settings: a setting added, renamed or given another default there and not in the
/// document fails this test. `TESSERA_UPDATE_DOCS=1` makes the test write the table into the document.
@Suite struct ServeSettingsDocumentationTests {
    /// The repository root (this file is Tools/Tests/TesseraToolsTests/ServeSettingsDocumentationTests.swift).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The line before the table.
    static let begin = "<!-- settings table: made from ServeSettings.declarations; TESSERA_UPDATE_DOCS=1 swift test --filter ServeSettingsDocumentationTests rewrites it -->"
    /// The line after the table.
    static let end = "<!-- end of settings table -->"

    /// The Markdown table of `declarations`: one row per setting.
    static func table(_ declarations: [ServeSetting]) -> String {
        func code(_ text: String) -> String { "`\(text)`" }
        var rows = ["| Config file key | Environment | Flag | Value | Default | What it sets |", "|---|---|---|---|---|---|"]
        for setting in declarations {
            let key = setting.isInFile ? code(setting.key) : ""
            var variables = [setting.environment, setting.environmentFile].compactMap { $0 }.map(code)
            var flags = setting.flag.map { flag -> [String] in
                switch setting.form {
                case .value, .toggle: [code("--\(flag)")]
                case .repeatable: [code("--\(flag)") + " (repeat)"]
                }
            } ?? []
            variables += setting.aliases.filter { $0.hasPrefix("TESSERA_") }.map { code($0) + " (older)" }
            flags += setting.aliases.filter { $0.hasPrefix("--") }.map { code($0) + " (older)" }
            let olderKeys = setting.aliases.filter { !$0.hasPrefix("--") && !$0.hasPrefix("TESSERA_") }.map { code($0) + " (older)" }
            let keys = ([key].filter { !$0.isEmpty } + olderKeys).joined(separator: ", ")
            let summary = setting.summary + (setting.isSecret ? " (a secret: never printed)" : "")
            let value: String
            switch setting.form {
            case .toggle(let on): value = "a switch: the flag sets \(on ? "on" : "off"); elsewhere \(setting.syntax)"
            case .value, .repeatable: value = setting.syntax
            }
            let cells = [keys, variables.joined(separator: ", "), flags.joined(separator: ", "), value, setting.defaultValue, summary]
            rows.append("| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        return rows.joined(separator: "\n")
    }

    @Test("docs/SERVING.md's configuration table is the one made from the settings' declaration")
    func servingTable() throws {
        let file = Self.root.appendingPathComponent("docs/SERVING.md")
        let text = try String(contentsOf: file, encoding: .utf8)
        let start = try #require(text.range(of: Self.begin + "\n"), "SERVING.md has no settings table marker")
        let stop = try #require(text.range(of: Self.end, range: start.upperBound..<text.endIndex))
        let expected = Self.table(ServeSettings.declarations) + "\n"
        if ProcessInfo.processInfo.environment["TESSERA_UPDATE_DOCS"] == "1" {
            try (String(text[..<start.upperBound]) + expected + String(text[stop.lowerBound...])).write(to: file, atomically: true, encoding: .utf8)
            return
        }
        #expect(String(text[start.upperBound..<stop.lowerBound]) == expected,
                "docs/SERVING.md's settings table differs from ServeSettings.declarations: TESSERA_UPDATE_DOCS=1 swift test --filter ServeSettingsDocumentationTests")
    }
}
