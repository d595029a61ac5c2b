#if Serving
import Logging
import Tessera

extension ServerConfiguration.Preset: SettingValue {
    /// `NAME:WxH:MODE` (a full recipe in the config file).
    public static var syntax: String { "NAME:WxH:MODE" }

    /// `NAME:WxH:MODE` (``init(parsing:)``).
    public init(settingText text: String) throws(SettingValueFailure) {
        do throws(ServerConfigurationError) {
            self = try Self(parsing: text)
        } catch {
            let modes = ImageProcessing.Mode.allCases.map(\.rawValue).joined(separator: ", ")
            throw SettingValueFailure("is not NAME:WxH:MODE (Wx or xH for one side; MODE one of \(modes))")
        }
    }

    /// A recipe object (`{"name": "card", "width": 320, …}`), or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        if case .string(let text) = json { try self.init(settingText: text); return }
        do {
            self = try json.decode(Self.self)
        } catch {
            throw SettingValueFailure("is not a preset {\"name\", \"width\", \"height\", \"mode\", …}: \(error)")
        }
    }
}

extension ServerConfiguration.SigningKey: SettingValue {
    /// `ID:SECRET` (`{"id", "secret"}` in the config file).
    public static var syntax: String { "ID:SECRET" }

    /// `ID:SECRET`: the id up to the first colon, the secret after it, neither empty.
    public init(settingText text: String) throws(SettingValueFailure) {
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex else {
            throw SettingValueFailure("is not ID:SECRET")
        }
        self.init(id: String(text[..<colon]), secret: String(text[text.index(after: colon)...]))
    }

    /// `{"id": …, "secret": …}`, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        if case .string(let text) = json { try self.init(settingText: text); return }
        guard case .object(let members) = json, case .string(let id)? = members["id"], case .string(let secret)? = members["secret"],
              !id.isEmpty, !secret.isEmpty else {
            throw SettingValueFailure("is not {\"id\": …, \"secret\": …}")
        }
        self.init(id: id, secret: secret)
    }
}

extension DecodingPolicy: SettingValue {
    /// `lenient` or `strict`.
    public static var syntax: String { allCases.map(\.rawValue).joined(separator: " or ") }

    /// `lenient` or `strict` (any case).
    public init(settingText text: String) throws(SettingValueFailure) {
        guard let policy = DecodingPolicy(rawValue: text.lowercased()) else { throw SettingValueFailure("is not one of lenient, strict") }
        self = policy
    }
}

extension Logger.Level: SettingValue {
    /// swift-log's level names.
    public static var syntax: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical` (any case).
    public init(settingText text: String) throws(SettingValueFailure) {
        guard let level = Logger.Level(rawValue: text.lowercased()) else { throw SettingValueFailure("is not one of \(Self.syntax)") }
        self = level
    }
}
#endif
