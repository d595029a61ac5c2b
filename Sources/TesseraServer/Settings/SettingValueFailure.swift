#if Serving
/// Why a text or JSON value is not a value of a setting's type (the type's own words, without the
/// setting: the reader adds where the value came from).
public struct SettingValueFailure: Error, Sendable {
    /// `is not a whole number`, `is not HOST:PORT`, ….
    public let reason: String
    /// A failure saying `reason`.
    public init(_ reason: String) { self.reason = reason }
}
#endif
