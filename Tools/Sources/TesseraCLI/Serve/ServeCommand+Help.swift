import TesseraServer

extension ServeCommand {
    /// The settings part of `tessera serve --help`, one entry per declared setting that has a flag:
    /// the flag and its value, what it does, its variable and its default.
    static func helpText(_ declarations: [ServeSetting]) -> String {
        var lines = ["Settings (flags over TESSERA_… variables over the --config file; docs/SERVING.md, \"Configuration\"):"]
        for setting in declarations {
            guard let flag = setting.flag else { continue }
            var usage = "--" + flag
            switch setting.form {
            case .value: usage += " <\(setting.syntax)>"
            case .repeatable: usage += " <\(setting.syntax)> (repeatable)"
            case .toggle: break
            }
            var notes: [String] = []
            if let variable = setting.environment { notes.append(variable + (setting.isSecret ? " or \(variable)_FILE" : "")) }
            notes.append("default " + setting.defaultValue.replacingOccurrences(of: "`", with: ""))
            lines.append("  \(usage)")
            lines.append("        \(setting.summary.replacingOccurrences(of: "`", with: "")) (\(notes.joined(separator: "; "))).")
        }
        return lines.joined(separator: "\n")
    }
}
