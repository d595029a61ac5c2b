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

    /// Every setting at its default (no root yet).
    public init() {
        server = ServerConfiguration(root: "")
    }
}
#endif
