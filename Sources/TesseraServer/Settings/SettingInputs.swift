#if Serving
/// What the three sources hold for one setting, as ``ServeSettingsReader`` found it: the flag's
/// arguments, the variable's text, the config file's value, each with the spelling it was found under
/// (an alias is reported as written).
public struct SettingInputs: Sendable {
    /// The flag as written (`--gallery-thumbhash-seconds`) and its arguments, one per occurrence
    /// (`"true"`/`"false"` for a flag without argument).
    public var flag: (spelling: String, texts: [String])?
    /// The variable as found (`TESSERA_GALLERY_THUMBHASH_SECONDS`, or `…_FILE` for a secret read from a
    /// file) and its text.
    public var environment: (spelling: String, text: String)?
    /// The key as found (`gallery.thumbHashSeconds in serve.json`) and its value.
    public var file: (spelling: String, value: JSONValue)?

    /// No input: the setting keeps its default.
    public init() {}
}
#endif
