import TesseraImaging
import TesseraTables
import Foundation

/// A cache of decoded images kept in memory, consulted by ``ImageManager`` before anything else.
///
/// Implementations must be safe to call from any thread and must never block on I/O: lookups happen
/// on the requesting task. ``MemoryCache`` is the default; a cache of your own (its values all public:
/// ``ImageKey``, ``MemoryCacheStatistics``, ``MemoryCacheLimits``) goes to
/// ``ImageManager/init(configuration:loader:authorizer:memoryCache:diskCache:decoder:now:)``.
public protocol MemoryCaching: Sendable {
    /// The image for `key`, counted as a use, or `nil`.
    func image(for key: ImageKey) -> Bitmap?
    /// Whether an image is held for `key`, without counting a use.
    func contains(_ key: ImageKey) -> Bool
    /// Stores `image` under `key`; its cost is `image.layout.byteCount`.
    func insert(_ image: Bitmap, for key: ImageKey)
    /// Removes the image for `key`.
    func removeImage(for key: ImageKey)
    /// Removes every image.
    func removeAll()
    /// Removes least recently used images until the total cost is at most `cost` bytes.
    func trim(toCost cost: Int)
    /// The sum of the costs of the cached images, in bytes.
    var totalCost: Int { get }
    /// Counts and counters since creation.
    var statistics: MemoryCacheStatistics { get }
    /// The current limits.
    var configuration: MemoryCacheLimits { get }
    /// Replaces the limits and evicts until they hold.
    func setLimits(_ configuration: MemoryCacheLimits)
}

extension MemoryCaching {
    /// Whether an image is held for `key`: a lookup (which counts as a use) unless the cache has its own.
    public func contains(_ key: ImageKey) -> Bool { image(for: key) != nil }
}

/// Limits of a memory cache: total cost, count, time-to-live (``MemoryCache``'s, and any
/// ``MemoryCaching`` that has such limits).
public struct MemoryCacheLimits: Sendable, Hashable {
    /// Largest total cost in bytes.
    public var costLimit: Int
    /// Largest number of images.
    public var countLimit: Int
    /// How long an image may be served after insertion, or `nil` for no limit.
    public var timeToLive: Duration?

    /// Creates limits: by default 256 MiB, 1000 images, no time-to-live.
    public init(costLimit: Int = 256 << 20, countLimit: Int = 1000, timeToLive: Duration? = nil) {
        self.costLimit = costLimit
        self.countLimit = countLimit
        self.timeToLive = timeToLive
    }
}

/// A memory cache's counts and counters since creation.
public struct MemoryCacheStatistics: Sendable, Hashable, Codable {
    /// Images held.
    public var count: Int
    /// Their total cost in bytes.
    public var totalCost: Int
    /// Lookups that found a live image.
    public var hits: Int
    /// Lookups that found nothing, or an expired image.
    public var misses: Int
    /// Images removed to respect the limits, by trimming, or because they expired.
    public var evictions: Int

    /// Creates statistics from a cache's counts: what a ``MemoryCaching`` cache of your own returns from
    /// ``MemoryCaching/statistics``. Every count is zero unless given.
    public init(count: Int = 0, totalCost: Int = 0, hits: Int = 0, misses: Int = 0, evictions: Int = 0) {
        self.count = count
        self.totalCost = totalCost
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
    }
}
