#if Serving
/// An address range in CIDR notation (`10.0.0.0/8`, `fd00::/8`, or one address), checked when it is read.
public struct CIDRRange: SettingValue, Hashable {
    /// The range as given.
    public var text: String

    /// `ADDRESS/PREFIX`.
    public static var syntax: String { "ADDRESS/PREFIX" }

    /// Checks that `text` is an ``AddressRange``.
    public init(settingText text: String) throws(SettingValueFailure) {
        guard AddressRange(text) != nil else { throw SettingValueFailure("is not an address range in CIDR notation (such as 127.0.0.0/8)") }
        self.text = text
    }
}
#endif
