#if Serving
/// A length of time a setting keeps in whole seconds (`Cache-Control` `max-age`): written as a
/// ``SettingDuration`` (`60`, `1m`, `1h`) that comes to a whole number of seconds.
public struct WholeSeconds: SettingValue, Hashable {
    /// The length in seconds.
    public var seconds: Int

    /// A duration of whole seconds, or a number with `s`, `m`, `h`.
    public static var syntax: String { "a whole number of seconds (or with m or h: 10m, 1h)" }

    /// `60`, `90s`, `10m`, `1h`.
    public init(settingText text: String) throws(SettingValueFailure) {
        try self.init(SettingDuration(settingText: text))
    }

    /// A JSON number of seconds, or a string read as text.
    public init(settingJSON json: JSONValue) throws(SettingValueFailure) {
        try self.init(SettingDuration(settingJSON: json))
    }

    private init(_ duration: SettingDuration) throws(SettingValueFailure) {
        guard duration.seconds.rounded() == duration.seconds, duration.seconds <= Double(Int32.max) else {
            throw SettingValueFailure("is not \(Self.syntax)")
        }
        seconds = Int(duration.seconds)
    }
}
#endif
