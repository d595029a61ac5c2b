#if Serving
import Foundation

/// A length of time of a setting: a number of seconds (`30`, `1.5`), or a number with a unit, `ms`, `s`,
/// `m` or `h` (`500ms`, `30s`, `2m`, `1h`); in the config file a JSON number of seconds or such a string.
/// Never negative, never infinite.
public struct SettingDuration: SettingValue, Hashable {
    /// The length in seconds.
    public var seconds: Double

    /// A duration of `seconds`.
    public init(seconds: Double) { self.seconds = seconds }

    /// `SECONDS` or a number with `ms`, `s`, `m`, `h`.
    public static var syntax: String { "a duration (seconds, or a number with ms, s, m or h: 500ms, 30s, 2m)" }

    /// `30`, `1.5`, `500ms`, `30s`, `2m`, `1h`.
    public init(settingText text: String) throws(SettingValueFailure) {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        let units: [(suffix: String, seconds: Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        let unit = units.first { trimmed.hasSuffix($0.suffix) } ?? ("", 1)
        guard let number = Double(trimmed.dropLast(unit.suffix.count)), !trimmed.hasPrefix("+") else {
            throw SettingValueFailure("is not \(Self.syntax)")
        }
        try self.init(checking: number * unit.seconds)
    }

    /// A JSON number of seconds, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        switch json {
        case .integer(let value): try self.init(checking: Double(value))
        case .number(let value): try self.init(checking: value)
        case .string(let text): try self.init(settingText: text)
        default: throw SettingValueFailure("is not \(Self.syntax)")
        }
    }

    private init(checking seconds: Double) throws(SettingValueFailure) {
        guard seconds.isFinite, seconds >= 0 else { throw SettingValueFailure("is not a duration of 0 or more seconds") }
        self.seconds = seconds
    }
}
#endif
