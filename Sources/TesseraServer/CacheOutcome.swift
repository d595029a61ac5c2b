#if Serving
/// Where an image response came from: the `X-Tessera-Cache` header, the log line's `cache` field and
/// the `outcome` label of `tessera_serve_cache_outcomes_total`.
public enum CacheOutcome: String, Sendable, Hashable, CaseIterable {
    /// The encoded-response memory cache.
    case memory
    /// The preset's image table (no decode), then an encode.
    case table
    /// A decode of a local source (into the preset's table, or for an ad-hoc size), then an encode.
    case produced
    /// Another request's work for the same response, which this one joined while it ran.
    case coalesced
    /// A downloaded remote source, decoded and encoded.
    case remote
    /// A `304` for a matching `If-None-Match` (not counted as a cache outcome).
    case notModified = "not-modified"
}
#endif
