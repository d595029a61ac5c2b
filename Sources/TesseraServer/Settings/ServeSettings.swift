#if Serving
import Logging

/// Everything `tessera serve` is started with: the ``ServerConfiguration`` of the service, and the few
/// settings of the command itself (logging, the config file, the gallery's test mode). Read by
/// ``ServeSettingsReader`` from flags, `TESSERA_…` variables and the config file, as ``declarations`` says.
public struct ServeSettings: Sendable {
    /// How the command writes its log lines.
    public enum LogFormat: String, SettingValue, CaseIterable {
        /// swift-log's `StreamLogHandler` lines (the default).
        case text
        /// One JSON object per line.
        case json

        /// `text` or `json`.
        public static var syntax: String { "text or json" }

        /// `text` or `json` (any case).
        public init(settingText text: String) throws(SettingValueFailure) {
            guard let format = LogFormat(rawValue: text.lowercased()) else { throw SettingValueFailure("is not one of text, json") }
            self = format
        }
    }

    /// Where a setting's value came from, as ``ServeSettingsReader/check(arguments:environment:)`` found it.
    public struct Origin: Sendable, Hashable {
        /// The flag, variable or config file key that gave the value (`--listen`, `TESSERA_LISTEN`,
        /// `listen in serve.json`); of two, the one that wins.
        public let spelling: String
        /// The value as given; `(secret)` for a secret.
        public let shown: String

        /// An origin: the value `shown` given as `spelling`.
        public init(spelling: String, shown: String) {
            self.spelling = spelling
            self.shown = shown
        }

        /// The origin of the value `input` gives by the one rule of precedence (a flag over a variable over
        /// the file); `nil` when it gives none (the default stands).
        init?(_ input: SettingInputs, secret: Bool) {
            let found: (String, String)? = if let flag = input.flag {
                (flag.spelling, flag.texts.joined(separator: ","))
            } else if let variable = input.environment {
                (variable.spelling, variable.text)
            } else if let file = input.file {
                (file.spelling, file.value.description)
            } else {
                nil
            }
            guard let (spelling, shown) = found else { return nil }
            self.init(spelling: spelling, shown: secret ? "(secret)" : shown)
        }
    }

    /// The service's configuration.
    public var server: ServerConfiguration
    /// The JSON config file read (`--config`), if any.
    public var configFile: String? = nil
    /// The least level logged; `nil`: swift-log's default (`info`).
    public var logLevel: Logger.Level? = nil
    /// How log lines are written.
    public var logFormat: LogFormat = .text
    /// Where the gallery's test mode writes its reports (`--gallery-report`); `nil`: no test mode.
    public var galleryReport: String? = nil
    /// Where each setting given a value got it, by setting key (``ServeSetting/key``); a setting left at
    /// its default has none.
    public var origins: [String: Origin] = [:]

    /// Every setting at its default (no root yet).
    public init() {
        server = ServerConfiguration(root: "")
    }
}
#endif
