import TesseraImaging
import TesseraTables
/// Counters of an ``ImageManager`` since it was created.
public struct FetchStatistics: Sendable, Hashable, Codable {
    /// Requests answered from the memory cache.
    public var memoryHits = 0
    /// Jobs answered from a fresh (or, offline, any) disk copy without asking the server.
    public var diskHits = 0
    /// Loads handed to the ``DataLoading`` loader (each one request at the origin, redirects aside).
    public var downloads = 0
    /// Loads answered `304 Not Modified`: the disk copy was revalidated without a body.
    public var notModified = 0
    /// Requests that joined a job already in progress for their URL instead of starting one.
    public var coalesced = 0
    /// Images decoded.
    public var decodes = 0
    /// Cached copies that failed to decode and were removed and fetched again.
    public var corruptRefetches = 0
    /// Jobs that ended in an error (cancellation excluded).
    public var failures = 0

    /// Creates zeroed counters.
    public init() {}
}
