#if Serving
import Foundation

/// One `tessera serve` setting, declared once: its config file key, flag, `TESSERA_…` variable, older
/// spellings, type, default and one line of documentation. ``ServeSettings/declarations`` lists them all;
/// ``ServeSettingsReader`` reads each from the three sources through its declaration, and the
/// configuration table of docs/SERVING.md is made from the same list.
public struct ServeSetting: Sendable {
    /// How the setting is given on the command line, and how many values it has.
    public enum Form: Sendable, Hashable {
        /// One value (`--listen HOST:PORT`); a repeated flag's last argument wins.
        case value
        /// A list: the flag repeated, the variable comma-separated, a JSON array (or object) in the file.
        case repeatable
        /// A flag without argument that sets the value to the associated one (`--only-presets` true,
        /// `--no-gallery` false); the variable and the file key take any ``Swift/Bool`` spelling.
        case toggle(Bool)
    }

    /// The config file key, a path of object members (`gallery.thumbHashSeconds`); for a setting the
    /// file cannot hold (``isInFile`` false), the name it is known by (`logLevel`).
    public let key: String
    /// Whether the config file may hold the setting.
    public let isInFile: Bool
    /// The flag without its dashes (`gallery-thumbhash-seconds`); `nil`: no flag.
    public let flag: String?
    /// The environment variable (`TESSERA_GALLERY_THUMBHASH_SECONDS`); `nil`: none.
    public let environment: String?
    /// Older spellings that still work: flags (`--…`), variables (`TESSERA_…`) or file keys.
    public let aliases: [String]
    /// How the setting is given.
    public let form: Form
    /// Whether the value is a secret: never printed, and also read from the file a `…_FILE` variable names.
    public let isSecret: Bool
    /// What a value looks like (``SettingValue/syntax``).
    public let syntax: String
    /// The default, as the documentation states it.
    public let defaultValue: String
    /// One line on what the setting does.
    public let summary: String
    /// Parses every source's input (so that a malformed value anywhere throws), picks the winner by
    /// `ServeSettingsReader.precedence(flag:environment:file:merge:)` and applies it.
    let resolve: @Sendable (SettingInputs, inout ServeSettings) throws(ServeSettingError) -> Void

    /// The variable that names a file holding a secret's value: ``environment`` + `_FILE`.
    public var environmentFile: String? { isSecret ? environment.map { $0 + "_FILE" } : nil }

    /// A setting of one value of type `Value`, given to `apply` when any source has it.
    static func value<Value: SettingValue>(
        _ key: String, file: Bool = true, flag: String?, environment: String?, aliases: [String] = [], secret: Bool = false,
        default defaultValue: String, _ summary: String, as type: Value.Type,
        apply: @escaping @Sendable (Value, inout ServeSettings) throws(SettingValueFailure) -> Void
    ) -> ServeSetting {
        ServeSetting(key: key, isInFile: file, flag: flag, environment: environment, aliases: aliases, form: .value, isSecret: secret,
                     syntax: Value.syntax, defaultValue: defaultValue, summary: summary,
                     resolve: { (inputs: SettingInputs, settings: inout ServeSettings) throws(ServeSettingError) -> Void in
                         try resolveValue(inputs, &settings, as: Value.self, secret: secret, apply: apply)
                     })
    }

    /// Reads every input of a one-value setting, and applies the winner.
    private static func resolveValue<Value: SettingValue>(
        _ inputs: SettingInputs, _ settings: inout ServeSettings, as type: Value.Type, secret: Bool,
        apply: (Value, inout ServeSettings) throws(SettingValueFailure) -> Void
    ) throws(ServeSettingError) {
        var flag: SourcedValue<Value>?
        var variable: SourcedValue<Value>?
        var file: SourcedValue<Value>?
        if let input = inputs.flag { flag = try read(Value.self, input.texts.last ?? "", from: input.spelling, secret: secret) }
        if let input = inputs.environment { variable = try read(Value.self, input.text, from: input.spelling, secret: secret) }
        if let input = inputs.file { file = try read(Value.self, json: input.value, from: input.spelling, secret: secret) }
        guard let winner = ServeSettingsReader.precedence(flag: flag, environment: variable, file: file, merge: nil) else { return }
        try applying(winner) { (value: Value) throws(SettingValueFailure) -> Void in try apply(value, &settings) }
    }

    /// A setting that a flag without argument turns on or off (`onFlag`), read as a `Bool` elsewhere.
    static func toggle(
        _ key: String, file: Bool = true, flag: String, onFlag: Bool, environment: String?, aliases: [String] = [],
        default defaultValue: String, _ summary: String, apply: @escaping @Sendable (Bool, inout ServeSettings) -> Void
    ) -> ServeSetting {
        let setting = value(key, file: file, flag: flag, environment: environment, aliases: aliases, default: defaultValue, summary,
                            as: Bool.self) { value, settings in apply(value, &settings) }
        return ServeSetting(key: key, isInFile: file, flag: flag, environment: environment, aliases: aliases, form: .toggle(onFlag),
                            isSecret: false, syntax: Bool.syntax, defaultValue: defaultValue, summary: summary, resolve: setting.resolve)
    }

    /// A list of `Element`s: the flag repeated, the variable comma-separated (or one per line), a JSON
    /// array in the file (or what ``SettingValue/settingElements(json:)`` of `Element` reads). A flag
    /// or variable replaces the file's list, or, when `mergesWithFile`, comes after it.
    static func list<Element: SettingValue>(
        _ key: String, file: Bool = true, flag: String?, environment: String?, aliases: [String] = [], secret: Bool = false,
        mergesWithFile: Bool = false, default defaultValue: String, _ summary: String, of type: Element.Type,
        apply: @escaping @Sendable ([Element], inout ServeSettings) throws(SettingValueFailure) -> Void
    ) -> ServeSetting {
        ServeSetting(key: key, isInFile: file, flag: flag, environment: environment, aliases: aliases, form: .repeatable, isSecret: secret,
                     syntax: Element.syntax, defaultValue: defaultValue, summary: summary,
                     resolve: { (inputs: SettingInputs, settings: inout ServeSettings) throws(ServeSettingError) -> Void in
                         try resolveList(inputs, &settings, of: Element.self, secret: secret, mergesWithFile: mergesWithFile, apply: apply)
                     })
    }

    /// Reads every input of a list setting, and applies the winner (with the file's list before it when `mergesWithFile`).
    private static func resolveList<Element: SettingValue>(
        _ inputs: SettingInputs, _ settings: inout ServeSettings, of type: Element.Type, secret: Bool, mergesWithFile: Bool,
        apply: ([Element], inout ServeSettings) throws(SettingValueFailure) -> Void
    ) throws(ServeSettingError) {
        func elements(_ texts: [String], from spelling: String) throws(ServeSettingError) -> SourcedValue<[Element]> {
            var values: [Element] = []
            for text in texts { values.append(try read(Element.self, text, from: spelling, secret: secret).value) }
            return SourcedValue(value: values, spelling: spelling, shown: secret ? "(secret)" : texts.joined(separator: ","))
        }
        var flag: SourcedValue<[Element]>?
        var variable: SourcedValue<[Element]>?
        var file: SourcedValue<[Element]>?
        if let input = inputs.flag { flag = try elements(input.texts, from: input.spelling) }
        if let input = inputs.environment { variable = try elements(ServeSettingsReader.listItems(input.text), from: input.spelling) }
        if let input = inputs.file {
            let shown = secret ? "(secret)" : input.value.description
            do throws(SettingValueFailure) {
                file = SourcedValue(value: try Element.settingElements(json: input.value), spelling: input.spelling, shown: shown)
            } catch {
                throw ServeSettingError(setting: input.spelling, value: shown, reason: secret ? "is not a list of \(Element.syntax)" : error.reason)
            }
        }
        let merge: (([Element], [Element]) -> [Element])? = mergesWithFile ? { $0 + $1 } : nil
        guard let winner = ServeSettingsReader.precedence(flag: flag, environment: variable, file: file, merge: merge) else { return }
        try applying(winner) { (value: [Element]) throws(SettingValueFailure) -> Void in try apply(value, &settings) }
    }

    /// `text` as a `Value`, or an error naming `spelling` and the text (hidden for a secret).
    private static func read<Value: SettingValue>(_ type: Value.Type, _ text: String, from spelling: String,
                                                  secret: Bool) throws(ServeSettingError) -> SourcedValue<Value> {
        let shown = secret ? "(secret)" : text
        do throws(SettingValueFailure) {
            return SourcedValue(value: try Value(settingText: text), spelling: spelling, shown: shown)
        } catch {
            throw ServeSettingError(setting: spelling, value: shown, reason: error.reason)
        }
    }

    /// `json` as a `Value`, or an error naming `spelling` and the value (hidden for a secret).
    private static func read<Value: SettingValue>(_ type: Value.Type, json: JSONValue, from spelling: String,
                                                  secret: Bool) throws(ServeSettingError) -> SourcedValue<Value> {
        let shown = secret ? "(secret)" : json.description
        do throws(SettingValueFailure) {
            return SourcedValue(value: try Value(settingJSON: json), spelling: spelling, shown: shown)
        } catch {
            throw ServeSettingError(setting: spelling, value: shown, reason: error.reason)
        }
    }

    /// Runs `apply` on the winning value; a failure names where the value came from.
    private static func applying<Value>(_ winner: SourcedValue<Value>,
                                        _ apply: (Value) throws(SettingValueFailure) -> Void) throws(ServeSettingError) {
        do throws(SettingValueFailure) {
            try apply(winner.value)
        } catch {
            throw ServeSettingError(setting: winner.spelling, value: winner.shown, reason: error.reason)
        }
    }
}
#endif
