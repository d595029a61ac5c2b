#if Serving
import Foundation

/// A header field a named HTTP source sends with every request: `--source-header NAME:HEADER:VALUE` (the
/// config file has them in the source's `headers`).
public struct SourceHeader: SettingValue, Hashable {
    /// The source's name.
    public var source: String
    /// The header field's name.
    public var field: String
    /// Its value, spaces around it trimmed.
    public var value: String

    /// `NAME:HEADER:VALUE`.
    public static var syntax: String { "NAME:HEADER:VALUE" }

    /// `NAME:HEADER:VALUE`: HEADER is up to the second colon, VALUE keeps its own colons.
    public init(settingText text: String) throws(SettingValueFailure) {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else { throw SettingValueFailure("is not NAME:HEADER:VALUE") }
        source = parts[0]
        field = parts[1]
        value = parts[2].trimmingCharacters(in: .whitespaces)
    }
}
#endif
