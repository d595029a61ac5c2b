#if Serving
import Tessera

extension ServerConfiguration {
    /// An image that answers may ask to have drawn over them by its name (`watermark=NAME`, or a recipe's
    /// `watermark`), loaded and decoded once at start-up: `--watermark NAME=FILE`, or
    /// `{"name": NAME, "file": FILE}` in the config file's `watermarks` list.
    public struct Watermark: Sendable, Codable, Hashable {
        /// The name requests use: letters, digits, `-` and `_`.
        public var name: String
        /// The image file (any format Tessera reads).
        public var file: String

        /// A watermark `name` from `file`.
        public init(name: String, file: String) {
            self.name = name
            self.file = file
        }

        /// Parses `NAME=FILE` (the `--watermark` syntax).
        public init(parsing text: String) throws(ServerConfigurationError) {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex, text.index(after: equals) != text.endIndex else {
                throw ServerConfigurationError("watermark '\(text)' is not NAME=FILE")
            }
            self.init(name: String(text[..<equals]), file: String(text[text.index(after: equals)...]))
        }

    }
}

extension ServerConfiguration.Watermark: SettingValue {
    /// `NAME=FILE`.
    public static var syntax: String { "NAME=FILE" }

    /// `NAME=FILE` (``init(parsing:)``).
    public init(settingText text: String) throws(SettingValueFailure) {
        do throws(ServerConfigurationError) { self = try Self(parsing: text) } catch { throw SettingValueFailure("is not NAME=FILE") }
    }

    /// `{"name": NAME, "file": FILE}`, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        if case .string(let text) = json { try self.init(settingText: text); return }
        do { self = try json.decode(Self.self) } catch { throw SettingValueFailure("is not a watermark {\"name\", \"file\"}: \(error)") }
    }
}
#endif
