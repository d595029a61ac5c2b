#if Serving
/// `HOST:PORT` (`[V6]:PORT`; an empty host is `127.0.0.1`) of a listener, checked when it is read.
public struct ListenAddress: SettingValue, Hashable {
    /// The address as given.
    public var text: String

    /// `HOST:PORT`.
    public static var syntax: String { "HOST:PORT" }

    /// Checks that `text` is `HOST:PORT` with a port of 0…65535.
    public init(settingText text: String) throws(SettingValueFailure) {
        do throws(ServerConfigurationError) {
            _ = try ServerConfiguration.address(text, flag: "")
        } catch {
            throw SettingValueFailure("is not HOST:PORT (a port of 0…65535)")
        }
        self.text = text
    }
}
#endif
