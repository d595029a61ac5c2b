#if Serving
/// One named source of `--source NAME=URL` (``ServerConfiguration/Source``): in the config file, the
/// members of the `sources` object.
public struct SourceSetting: SettingValue, Hashable {
    /// The name in `/v1/{preset}/@{name}/…`.
    public var name: String
    /// The source.
    public var source: ServerConfiguration.Source

    /// `NAME=URL`.
    public static var syntax: String { "NAME=URL" }

    /// `NAME=URL`, the URL `file:///DIR`, `s3://BUCKET[/PREFIX]` or `http(s)://HOST[/BASE/]`.
    public init(settingText text: String) throws(SettingValueFailure) {
        do throws(ServerConfigurationError) {
            (name, source) = try ServerConfiguration.Source.parse(text)
        } catch {
            throw SettingValueFailure("is not a source: \(error.description)")
        }
    }

    /// `{"NAME": {"url": …, …}, …}`: each member a source (``ServerConfiguration/Source``'s JSON).
    public static func settingElements(json: JSONValue) throws(SettingValueFailure) -> [SourceSetting] {
        guard case .object(let members) = json else { throw SettingValueFailure("is not an object of sources {\"NAME\": {\"url\": …}}") }
        var sources: [SourceSetting] = []
        for (name, member) in members.sorted(by: { $0.key < $1.key }) {
            do {
                sources.append(SourceSetting(name: name, source: try member.decode(ServerConfiguration.Source.self)))
            } catch {
                throw SettingValueFailure("has a source '\(name)' that is not {\"url\": …, …}: \(error)")
            }
        }
        return sources
    }

    private init(name: String, source: ServerConfiguration.Source) {
        self.name = name
        self.source = source
    }
}
#endif
