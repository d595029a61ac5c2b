#if Serving
/// A value read from one source, with where it came from (for the messages about it).
struct SourcedValue<Value: Sendable>: Sendable {
    /// The value.
    var value: Value
    /// Where it was found: `--max-decodes`, `TESSERA_MAX_DECODES`, `limits.maximumConcurrentDecodes in serve.json`.
    var spelling: String
    /// The value as given, for messages (`(secret)` for secrets).
    var shown: String
}
#endif
