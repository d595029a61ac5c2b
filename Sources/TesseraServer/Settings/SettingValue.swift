#if Serving
import Foundation

/// A type a `tessera serve` setting can have: read from the text of a flag or a `TESSERA_…` variable, and
/// from the value of a config file key. A value that is not one throws, and the server does not start.
public protocol SettingValue: Sendable {
    /// What a value looks like, for the documentation and the help: `SECONDS`, `HOST:PORT`, `NAME:WxH:MODE`.
    static var syntax: String { get }
    /// The value of a flag's argument or a variable's text.
    init(settingText text: String) throws(SettingValueFailure)
    /// The value of a config file key. By default a JSON string is read as text; other JSON values are refused.
    init(settingJSON json: JSONValue) throws(SettingValueFailure)
    /// The values of a repeatable setting's config file key. By default a JSON array of values.
    static func settingElements(json: JSONValue) throws(SettingValueFailure) -> [Self]
}

extension SettingValue {
    /// Reads a JSON string as text (``init(settingText:)``); any other JSON value is not a value.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        guard case .string(let text) = json else { throw SettingValueFailure("is not \(Self.syntax)") }
        try self.init(settingText: text)
    }

    /// A JSON array whose members are each read with ``init(settingJSON:)``.
    public static func settingElements(json: JSONValue) throws(SettingValueFailure) -> [Self] {
        guard case .array(let members) = json else { throw SettingValueFailure("is not a list of \(syntax)") }
        var values: [Self] = []
        for member in members {
            do throws(SettingValueFailure) {
                values.append(try Self(settingJSON: member))
            } catch {
                throw SettingValueFailure("has \(member), which \(error.reason)")
            }
        }
        return values
    }
}

extension Int: SettingValue {
    /// A decimal integer.
    public static var syntax: String { "a whole number" }

    /// A decimal integer.
    public init(settingText text: String) throws(SettingValueFailure) {
        guard let value = Int(text.trimmingCharacters(in: .whitespaces)) else { throw SettingValueFailure("is not a whole number") }
        self = value
    }

    /// A JSON integer, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        switch json {
        case .integer(let value): self = value
        case .string(let text): try self.init(settingText: text)
        default: throw SettingValueFailure("is not a whole number")
        }
    }
}

extension Bool: SettingValue {
    /// `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
    public static var syntax: String { "1, 0, true, false, yes, no, on or off" }

    /// `1`, `true`, `yes`, `on` and `0`, `false`, `no`, `off` (any case).
    public init(settingText text: String) throws(SettingValueFailure) {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "1", "true", "yes", "on": self = true
        case "0", "false", "no", "off": self = false
        default: throw SettingValueFailure("is not one of \(Self.syntax)")
        }
    }

    /// A JSON boolean, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        switch json {
        case .bool(let value): self = value
        case .string(let text): try self.init(settingText: text)
        default: throw SettingValueFailure("is not true or false")
        }
    }
}

extension String: SettingValue {
    /// Any text.
    public static var syntax: String { "text" }

    /// The text as given.
    public init(settingText text: String) throws(SettingValueFailure) { self = text }
}
#endif
