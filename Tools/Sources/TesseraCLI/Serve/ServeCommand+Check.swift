import Foundation
import TesseraServer

extension ServeCommand {
    /// What `tessera serve --check-config` prints: every setting's effective value, where it came from (a
    /// flag, a variable, the config file, or the default) and, when there are any, every problem that
    /// would stop the server: the values that cannot be read (``ServeSettingsReader/check(arguments:environment:)``)
    /// and the configuration's own problems and those of its files (``ImageService/startupProblems(of:)``).
    /// Secrets show as `(secret)`.
    static func checkReport(arguments: [String], environment: [String: String]) -> (settings: String, problems: String) {
        let (settings, readProblems) = ServeSettingsReader().check(arguments: arguments, environment: environment)
        let problems = readProblems.map(\.description) + ImageService.startupProblems(of: settings.server).map(\.description)
        let declarations = ServeSettings.declarations
        let width = declarations.map(\.key.count).max() ?? 0
        var text = ""
        for declaration in declarations {
            let name = declaration.key.padding(toLength: width, withPad: " ", startingAt: 0)
            if let origin = settings.origins[declaration.key] {
                text += "\(name)  \(origin.shown)  (\(origin.spelling))\n"
            } else {
                text += "\(name)  \(declaration.defaultValue.replacingOccurrences(of: "`", with: ""))  (default)\n"
            }
        }
        guard !problems.isEmpty else { return (text + "tessera serve: the configuration is valid\n", "") }
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        return (text, "tessera serve: the configuration has \(count):\n" + problems.map { "  - \($0)\n" }.joined())
    }
}
