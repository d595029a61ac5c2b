import TesseraImaging
import TesseraTables
import Foundation

/// A cache of downloaded bytes and their HTTP freshness on disk, consulted by ``ImageManager`` after the
/// memory cache. ``DiskCache`` is the default; a cache of your own (its values all public:
/// ``DiskCacheEntry``, ``HTTPCacheInfo``, ``DiskCacheStatistics``) goes to
/// ``ImageManager/init(configuration:loader:authorizer:memoryCache:diskCache:decoder:now:)``.
///
/// ``contains(_:)`` must answer from memory (never touching the disk); the other methods may do I/O and
/// are only called from ``ImageManager``'s own tasks, never on a caller's actor.
public protocol DiskCaching: Sendable {
    /// Whether bytes for `url` are stored, answered from an in-memory index.
    func contains(_ url: URL) -> Bool
    /// The stored bytes and cache information, counted as an access; `nil` when absent or unreadable
    /// (an unreadable file is removed).
    func entry(for url: URL) async -> DiskCacheEntry?
    /// Stores `data` with `info`, replacing any previous entry atomically, then enforces the limits.
    func store(_ data: Data, info: HTTPCacheInfo, for url: URL) async throws(TesseraError)
    /// Replaces the cache information of an existing entry (after a `304`), keeping its bytes.
    func updateInfo(_ info: HTTPCacheInfo, for url: URL) async throws(TesseraError)
    /// Removes the entry for `url`.
    func remove(_ url: URL) async
    /// Removes every entry.
    func removeAll() async throws(TesseraError)
    /// Sizes, limits and counters, from memory (no I/O).
    var statistics: DiskCacheStatistics { get }
    /// Replaces the size and age limits and enforces them at once.
    func setLimits(sizeLimit: Int, ageLimit: Duration?)
}

/// A disk cache's sizes, limits and counters.
public struct DiskCacheStatistics: Sendable, Hashable, Codable {
    /// The cache directory.
    public var directory: String
    /// Number of entries.
    public var count: Int
    /// Total size of their files in bytes.
    public var totalBytes: Int
    /// The size limit in bytes.
    public var sizeLimit: Int
    /// The age limit.
    public var ageLimit: Duration?
    /// When the oldest entry was stored.
    public var oldestStoredAt: Date?
    /// Reads that found an entry (since this instance was created).
    public var hits: Int
    /// Reads that found none.
    public var misses: Int
    /// Entries removed by the limits.
    public var evictions: Int

    /// Creates statistics from a cache's sizes, limits and counters: what a ``DiskCaching`` cache of your
    /// own returns from ``DiskCaching/statistics``. `directory` is where it keeps its files (any text that
    /// names its storage); every count is zero, and the age limit and oldest entry are `nil`, unless given.
    public init(directory: String, count: Int = 0, totalBytes: Int = 0, sizeLimit: Int, ageLimit: Duration? = nil,
                oldestStoredAt: Date? = nil, hits: Int = 0, misses: Int = 0, evictions: Int = 0) {
        self.directory = directory
        self.count = count
        self.totalBytes = totalBytes
        self.sizeLimit = sizeLimit
        self.ageLimit = ageLimit
        self.oldestStoredAt = oldestStoredAt
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
    }
}
