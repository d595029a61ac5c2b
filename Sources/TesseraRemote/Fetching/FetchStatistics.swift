import TesseraImaging
import TesseraTables

/// Counters of an ``ImageManager`` since it was created: the one place that says how its requests went
/// (``ImageManager/statistics``). Two ledgers, each adding up once no request is in flight:
///
/// - **Requests** (every ``ImageManager/image(for:progress:)``, ``ImageManager/imageTask(for:)`` and
///   ``ImageManager/loadImage(for:progress:completion:)``; the bytes of ``ImageManager/data(for:priority:progress:)``
///   are counted by the jobs alone): `requests == memoryHits + memoryMisses`, and every miss ends once:
///   `memoryMisses == diskResponses + networkResponses + localResponses + tableResponses + failedRequests + cancelledRequests`.
///   Requests that shared one download each count where their answer came from.
/// - **Jobs** (one per image identity, shared by its requests): each job that may read the disk cache
///   looks once, `diskHits + diskMisses`; `downloads` are the loads handed to the loader (revalidations,
///   retries and the second try after a `401` included), of which `notModified` were answered `304`.
///   The background revalidation of a stale answer (`stale-while-revalidate`) is a job that counts its
///   loads (and a failure) but no disk lookup: the request that answered stale counted its disk hit.
///
/// The caches' own statistics (``MemoryCache/statistics``, ``DiskCache/statistics``) count the caches'
/// operations, by anyone: the disk cache counts a read only when its index holds the URL, since the
/// manager never reads what the index says is absent.
public struct FetchStatistics: Sendable, Hashable, Codable {
    /// Image requests made.
    public var requests = 0
    /// Requests answered from the memory cache.
    public var memoryHits = 0
    /// Requests the memory cache did not answer (those that may not read it included).
    public var memoryMisses = 0
    /// Requests answered from a disk copy (fresh, revalidated, or any copy when offline or cache-only).
    public var diskResponses = 0
    /// Requests answered by a download.
    public var networkResponses = 0
    /// Requests answered from a `file:` or `data:` URL.
    public var localResponses = 0
    /// Requests answered from an image table.
    public var tableResponses = 0
    /// Requests that failed (cancellation excluded).
    public var failedRequests = 0
    /// Requests cancelled before their answer.
    public var cancelledRequests = 0
    /// Jobs answered from a fresh (or, offline, any) disk copy without asking the server.
    public var diskHits = 0
    /// Jobs that found no usable disk copy (none, or a stale one to revalidate).
    public var diskMisses = 0
    /// Loads handed to the ``DataLoading`` loader (each one request at the origin, redirects aside).
    public var downloads = 0
    /// Loads answered `304 Not Modified`: the disk copy was revalidated without a body.
    public var notModified = 0
    /// Failed loads tried again (``RetryPolicy``).
    public var retries = 0
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
