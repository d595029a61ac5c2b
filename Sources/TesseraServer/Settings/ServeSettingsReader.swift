#if Serving
import Foundation

/// Reads `tessera serve`'s settings from its flags, the environment and a JSON config file, every one
/// through its declaration (``ServeSetting``), with one rule of precedence for all: flags over
/// environment variables over the config file (`precedence(flag:environment:file:merge:)`). Every
/// value given is parsed, the overridden ones too, and the first malformed one stops the reading with a
/// ``ServeSettingError`` that names the setting and the value. Unknown flags and unknown config file
/// keys are errors as well.
///
/// Not apple/swift-configuration, although Hummingbird already brings it in: its JSON provider refuses
/// arrays of objects, so the config file's `presets` and `signingKeys` would not load; its values are
/// strings, numbers, booleans and arrays of them, so presets, sources and signing keys would travel as
/// re-encoded strings; its getters with a default return the default for a malformed value (the very bug
/// this reader removes), and its conversion errors name neither the value nor the source it came from;
/// its environment names derive from the keys (`LIMITS_MAXIMUMSOURCEBYTES`), so every documented name
/// would need a mapping anyway, and it has no `…_FILE` secrets. What would remain of it is "the first
/// provider that has the key wins": `precedence(flag:environment:file:merge:)`.
public struct ServeSettingsReader: Sendable {
    /// The settings read, in the order they are applied.
    public var declarations: [ServeSetting]

    /// A reader of `declarations` (by default every `tessera serve` setting).
    public init(declarations: [ServeSetting] = ServeSettings.declarations) {
        self.declarations = declarations
    }

    /// The settings given by `arguments` (the command's arguments, `--root DIR --listen :8080 …`),
    /// `environment` and the config file that `--config` or `TESSERA_CONFIG` names, over the defaults.
    /// - Throws: the first problem ``check(arguments:environment:)`` finds.
    public func read(arguments: [String], environment: [String: String]) throws(ServeSettingError) -> ServeSettings {
        let (settings, problems) = check(arguments: arguments, environment: environment)
        if let first = problems.first { throw first }
        return settings
    }

    /// Reads the settings as ``read(arguments:environment:)`` does, but past every problem: the settings that
    /// could be read (each with where its value came from, ``ServeSettings/origins``) and every problem, in
    /// the order the sources are read (flags, variables, the config file, then each setting's values).
    /// A setting with a problem keeps its default; `tessera serve --check-config` lists them all.
    public func check(arguments: [String], environment: [String: String]) -> (settings: ServeSettings, problems: [ServeSettingError]) {
        var problems: [ServeSettingError] = []
        var inputs = flagInputs(arguments, problems: &problems)
        for (key, input) in environmentInputs(environment, problems: &problems) { inputs[key, default: SettingInputs()].environment = input }
        var configFile: String?
        if let config = declarations.first(where: { $0.key == ServeSettings.configKey }) {
            var settings = ServeSettings()
            do throws(ServeSettingError) { try config.resolve(inputs[config.key] ?? SettingInputs(), &settings) } catch { problems.append(error) }
            configFile = settings.configFile
        }
        if let configFile {
            do throws(ServeSettingError) {
                for (key, input) in fileInputs(try Self.loadJSON(file: configFile), named: configFile, problems: &problems) {
                    inputs[key, default: SettingInputs()].file = input
                }
            } catch {
                problems.append(error)
            }
        }
        var settings = ServeSettings()
        for declaration in declarations {
            let input = inputs[declaration.key] ?? SettingInputs()
            do throws(ServeSettingError) {
                try declaration.resolve(input, &settings)
                if let origin = ServeSettings.Origin(input, secret: declaration.isSecret) { settings.origins[declaration.key] = origin }
            } catch {
                problems.append(error)
            }
        }
        return (settings, problems)
    }

    /// The settings a config file's JSON gives (no flags, no environment), over the defaults;
    /// `name` is how messages call the file.
    public func read(file json: JSONValue, named name: String) throws(ServeSettingError) -> ServeSettings {
        var problems: [ServeSettingError] = []
        let inputs = fileInputs(json, named: name, problems: &problems)
        if let first = problems.first { throw first }
        var settings = ServeSettings()
        for declaration in declarations {
            guard let input = inputs[declaration.key] else { continue }
            var only = SettingInputs()
            only.file = input
            try declaration.resolve(only, &settings)
        }
        return settings
    }

    /// A part of the configuration (`limits`, `gallery`, …) decoded from the JSON object `decoder` holds,
    /// as if it were that member of a config file: how the parts' `Decodable` conformances read.
    static func section<Part>(_ name: String, of decoder: any Decoder, _ part: KeyPath<ServerConfiguration, Part>) throws -> Part {
        let json = JSONValue.object([name: try JSONValue(from: decoder)])
        return try ServeSettingsReader().read(file: json, named: "the configuration").server[keyPath: part]
    }

    /// The one rule of precedence: a flag over a variable over the config file. With `merge`, the file's
    /// value is kept under the winner of the other two (`merge(file, winner)`), as for named sources.
    static func precedence<Value>(flag: SourcedValue<Value>?, environment: SourcedValue<Value>?, file: SourcedValue<Value>?,
                                  merge: ((Value, Value) -> Value)?) -> SourcedValue<Value>? {
        guard let outer = flag ?? environment else { return file }
        guard let file, let merge else { return outer }
        return SourcedValue(value: merge(file.value, outer.value), spelling: outer.spelling, shown: outer.shown)
    }

    /// The items of a list variable: separated by commas or lines, spaces trimmed, empty ones dropped.
    static func listItems(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0.isNewline }).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The flags of `arguments`, by setting key: `--name VALUE`, `--name=VALUE`, `--toggle`. Unknown
    /// flags, positional arguments and a missing value are `problems` (and left out).
    func flagInputs(_ arguments: [String], problems: inout [ServeSettingError]) -> [String: SettingInputs] {
        var byFlag: [String: ServeSetting] = [:]
        for declaration in declarations {
            for name in ([declaration.flag.map { "--" + $0 }] + declaration.aliases.map(Optional.some)).compactMap({ $0 }) where name.hasPrefix("--") {
                byFlag[name] = declaration
            }
        }
        var inputs: [String: SettingInputs] = [:]
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard argument.hasPrefix("--"), let declaration = byFlag[parts[0]] else {
                problems.append(ServeSettingError(setting: argument, value: "",
                                                  reason: argument.hasPrefix("-") ? "is not an option of tessera serve" : "is an unexpected argument (options are --NAME VALUE)"))
                continue
            }
            let text: String
            if case .toggle(let on) = declaration.form {
                guard parts.count == 1 else {
                    problems.append(ServeSettingError(setting: parts[0], value: parts[1], reason: "takes no value"))
                    continue
                }
                text = on ? "true" : "false"
            } else if parts.count == 2 {
                text = parts[1]
            } else {
                guard index < arguments.endIndex else {
                    problems.append(ServeSettingError(setting: argument, value: "", reason: "needs a value (\(declaration.syntax))"))
                    break
                }
                text = arguments[index]
                index += 1
            }
            var input = inputs[declaration.key] ?? SettingInputs()
            input.flag = (spelling: parts[0], texts: (input.flag?.texts ?? []) + [text])
            inputs[declaration.key] = input
        }
        return inputs
    }

    /// The variables of `environment` that name settings, by setting key. A secret's `…_FILE` variable
    /// is read from its file (a trailing line break dropped); setting both it and the variable is a problem.
    func environmentInputs(_ environment: [String: String],
                           problems: inout [ServeSettingError]) -> [String: (spelling: String, text: String)] {
        var inputs: [String: (spelling: String, text: String)] = [:]
        for declaration in declarations {
            // The declared variable (`TESSERA_…`, or another service's own, such as `IMGPROXY_KEY`), then
            // the older `TESSERA_…` spellings among the aliases.
            let names = [declaration.environment].compactMap { $0 } + declaration.aliases.filter { $0.hasPrefix("TESSERA_") }
            var found = names.first { environment[$0] != nil }.map { (spelling: $0, text: environment[$0]!) }
            if let fileVariable = declaration.environmentFile, let path = environment[fileVariable] {
                if let found {
                    problems.append(ServeSettingError(setting: fileVariable, value: path, reason: "and \(found.spelling) are both set: give the secret once"))
                    continue
                }
                guard let text = Self.secret(atPath: path) else {
                    problems.append(ServeSettingError(setting: fileVariable, value: path, reason: "names no readable file"))
                    continue
                }
                found = (spelling: fileVariable, text: text)
            }
            if let found { inputs[declaration.key] = found }
        }
        return inputs
    }

    /// The secret in the file at `path`, as systemd's credentials and Kubernetes' secrets mount them: its
    /// text without trailing line breaks; `nil` when it cannot be read.
    static func secret(atPath path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        var text = String(decoding: data, as: UTF8.self)
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }

    /// The config file's values, by setting key. A key no setting has is a problem (a misspelt key would
    /// otherwise be ignored); `null` is the same as leaving the key out.
    func fileInputs(_ json: JSONValue, named name: String,
                    problems: inout [ServeSettingError]) -> [String: (spelling: String, value: JSONValue)] {
        var keys: [String: String] = [:]
        for declaration in declarations where declaration.isInFile {
            keys[declaration.key] = declaration.key
            for alias in declaration.aliases where !alias.hasPrefix("--") && !alias.hasPrefix("TESSERA_") { keys[alias] = declaration.key }
        }
        var inputs: [String: (spelling: String, value: JSONValue)] = [:]
        func walk(_ value: JSONValue, path: String) {
            if let key = keys[path] {
                if value != .null { inputs[key] = (spelling: "\(path) in \(name)", value: value) }
                return
            }
            let isSection = path.isEmpty || keys.keys.contains { $0.hasPrefix(path + ".") }
            guard isSection else {
                problems.append(ServeSettingError(setting: "\(path) in \(name)", value: "",
                                                  reason: "is not a tessera serve setting (docs/SERVING.md, \"Configuration\")"))
                return
            }
            guard case .object(let members) = value else {
                if value == .null { return }
                problems.append(ServeSettingError(setting: "\(path) in \(name)", value: value.description, reason: "is not an object"))
                return
            }
            for (member, inner) in members.sorted(by: { $0.key < $1.key }) { walk(inner, path: path.isEmpty ? member : path + "." + member) }
        }
        walk(json, path: "")
        return inputs
    }

    /// The JSON of the config file at `path`.
    static func loadJSON(file path: String) throws(ServeSettingError) -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ServeSettingError(setting: "config file \(path)", value: "", reason: "cannot be read")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw ServeSettingError(setting: "config file \(path)", value: "", reason: "is not JSON: \(error)")
        }
    }
}
#endif
