@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The default ``MemoryCaching``: decoded images kept by least-recent use, bounded by total cost (bytes
/// of pixels) and by count, with an optional time-to-live.
///
/// - Inserting evicts least recently used images until both limits hold; an image costlier than the
///   whole cost limit is not kept at all.
/// - With ``MemoryCacheLimits/timeToLive``, a lookup of an older image removes it and misses.
/// - Linux sends no memory warnings: call ``trim(toCost:)`` or ``removeAll()`` yourself, or start a
///   ``MemoryPressureWatcher`` that does it when the kernel reports pressure.
///
/// Every method is synchronous, O(1) (except trimming, O(evicted)) and safe from any thread: the list
/// lives behind one `LockedValue`, and no I/O or decoding happens under it.
public final class MemoryCache: MemoryCaching {
    /// The limits (``MemoryCacheLimits``), under the name the cache's initializer has always used.
    public typealias Configuration = MemoryCacheLimits
    /// The counters (``MemoryCacheStatistics``).
    public typealias Statistics = MemoryCacheStatistics

    private struct State {
        /// Images with the time each was stored, in use order.
        var storage = LRUMap<ImageKey, (image: Bitmap, storedAt: Date)>()
        var configuration: Configuration
        var hits = 0
        var misses = 0
        var evictions = 0

        mutating func evict(toCost cost: Int, count: Int) {
            while storage.totalCost > cost || storage.count > count {
                guard storage.removeOldest() != nil else { return }
                evictions += 1
            }
        }
    }

    private let state: LockedValue<State>
    private let now: @Sendable () -> Date

    /// Creates a cache. `now` is the clock for the time-to-live (tests inject one).
    public init(configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.state = LockedValue(State(configuration: configuration))
        self.now = now
    }

    /// The current limits.
    public var configuration: Configuration { state.withLock { $0.configuration } }

    /// Replaces the limits and evicts until they hold.
    public func setLimits(_ configuration: Configuration) {
        state.withLock { state in
            state.configuration = configuration
            state.evict(toCost: configuration.costLimit, count: configuration.countLimit)
        }
    }

    /// The image for `key`, made the most recently used; `nil` when absent or older than the time-to-live.
    public func image(for key: ImageKey) -> Bitmap? {
        let date = now()
        return state.withLock { state -> Bitmap? in
            guard let node = state.storage.touch(key) else { state.misses += 1; return nil }
            if let ttl = state.configuration.timeToLive, date.timeIntervalSince(node.value.storedAt) >= ttl.timeInterval {
                state.storage.remove(key)
                state.evictions += 1
                state.misses += 1
                return nil
            }
            state.hits += 1
            return node.value.image
        }
    }

    /// Whether `key` is held (expired or not), without counting a use.
    public func contains(_ key: ImageKey) -> Bool {
        state.withLock { $0.storage.peek(key) != nil }
    }

    /// Stores `image` as the most recently used, then evicts until the limits hold.
    public func insert(_ image: Bitmap, for key: ImageKey) {
        let cost = image.layout.byteCount
        let date = now()
        state.withLock { state in
            guard cost <= state.configuration.costLimit, state.configuration.countLimit > 0 else {
                state.storage.remove(key)
                return
            }
            state.storage.insert(key, value: (image, date), cost: cost)
            state.evict(toCost: state.configuration.costLimit, count: state.configuration.countLimit)
        }
    }

    /// Removes the image for `key`.
    public func removeImage(for key: ImageKey) {
        _ = state.withLock { $0.storage.remove(key) }
    }

    /// Removes every image.
    public func removeAll() {
        state.withLock { state in
            state.evictions += state.storage.count
            state.storage.removeAll()
        }
    }

    /// Removes least recently used images until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        state.withLock { $0.evict(toCost: max(0, cost), count: Int.max) }
    }

    /// Removes least recently used images until at most `count` remain.
    public func trim(toCount count: Int) {
        state.withLock { $0.evict(toCost: Int.max, count: max(0, count)) }
    }

    /// The total cost of the held images, in bytes.
    public var totalCost: Int { state.withLock { $0.storage.totalCost } }

    /// The number of held images.
    public var count: Int { state.withLock { $0.storage.count } }

    /// Counters and sizes.
    public var statistics: Statistics {
        state.withLock { Statistics(count: $0.storage.count, totalCost: $0.storage.totalCost, hits: $0.hits,
                                    misses: $0.misses, evictions: $0.evictions) }
    }

    /// Keys from least to most recently used (tests).
    var keysOldestFirst: [ImageKey] { state.withLock { $0.storage.keysOldestFirst } }
}
