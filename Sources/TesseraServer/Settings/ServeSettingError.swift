#if Serving
/// A `tessera serve` setting that cannot be read: the setting as it was spelled where it was found (a
/// flag, a `TESSERA_…` variable, a config file key), the value given, and what is wrong with it. The
/// server does not start with it: no malformed value is ignored.
public struct ServeSettingError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The setting as given: `--gallery-thumbhash-seconds`, `TESSERA_GALLERY_THUMBHASH_SECONDS`,
    /// `gallery.thumbHashSeconds in serve.json`.
    public let setting: String
    /// The value given, as text; `(secret)` for a secret's value, which is never printed.
    public let value: String
    /// What is wrong with it: `is not a duration (…)`.
    public let reason: String

    /// An error about `value` of `setting`.
    public init(setting: String, value: String, reason: String) {
        self.setting = setting
        self.value = value
        self.reason = reason
    }

    /// `SETTING 'VALUE' REASON`: `TESSERA_GALLERY_THUMBHASH_SECONDS 'abc' is not a duration …`
    /// (`SETTING REASON` when there is no value, as for an unknown flag).
    public var description: String { value.isEmpty ? "\(setting) \(reason)" : "\(setting) '\(value)' \(reason)" }
}
#endif
