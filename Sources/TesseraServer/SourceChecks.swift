#if Serving
import Foundation
@_spi(Internal) import TesseraImaging

/// What the service last learnt about its sources, by key, with when: a file's `stat` under the root or a
/// directory source (``CheckedPaths``), an object's version in a bucket or an origin (``VersionTable``).
/// At most ``capacity`` keys, the least recently checked forgotten first (the library's `LRUMap`), so a
/// crawl over many sources costs the next request for a forgotten one a check, never unbounded memory.
/// Times are `ContinuousClock`'s, the one clock of the service's checks, deadlines and durations.
struct SourceChecks<Entry: Sendable>: Sendable {
    /// Keys kept at most.
    let capacity: Int
    private let entries = LockedValue(LRUMap<String, Entry>())

    init(capacity: Int) { self.capacity = capacity }

    /// What was learnt about `key`, if it is still kept (reading does not make it recent: checking does).
    func get(_ key: String) -> Entry? { entries.withLock { $0.peek(key)?.value } }

    /// Forgets what was learnt about `key` (its next request checks it); whether it was kept.
    @discardableResult
    func forget(_ key: String) -> Bool { entries.withLock { $0.remove(key) != nil } }

    /// Records what a check of `key` learnt; the least recently checked key goes when the map is full.
    func record(_ key: String, _ entry: Entry) {
        entries.withLock { map in
            map.insert(key, value: entry, cost: 1)
            while map.count > capacity, map.removeOldest() != nil {}
        }
    }
}
#endif
