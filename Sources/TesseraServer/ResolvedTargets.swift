#if Serving
@_spi(Internal) import TesseraImaging

/// How request targets resolved, so that a hit is not resolved again: by the request target as sent (path
/// and query) and the format its `Accept` chose, the resolved request (``ServeRequest``: its preset, source,
/// output and cache key) with the route and path its log line names.
///
/// ``ImageService/respond(to:)`` records every request it resolves whose answer can come from memory (a
/// file's, or a named source's object's); the ``MemoryHitHandler`` looks the target of each plain `GET` up
/// here and asks the service for the memory answer of what it finds (``ImageService/memoryAnswer(to:for:ifNoneMatch:ifModifiedSince:)``).
/// A target that is not here, or whose answer is not in memory, goes to the router, which resolves it
/// once. Nothing here is an answer: the response cache alone says what is in memory, and the source's
/// check says whether the resolved request still stands, so this map needs no invalidation of its own.
///
/// At most ``capacity`` targets, the least recently used forgotten first (the library's `LRUMap`): a
/// crawl over many URLs costs a forgotten target one trip through the router, never unbounded memory.
/// A target takes about 2.3 KB of heap (preset URLs with 10,000 distinct `cb` values: 22.2 MiB), so a
/// full map (16,384 × 2.3 KB) holds about 36 MiB.
final class ResolvedTargets: Sendable {
    /// What selects a resolved request: the request target and the format `Accept` chose
    /// (``OutputChoice/bestAccepted(_:)``; `nil`: neither AVIF nor WebP, or no `Accept`).
    struct Key: Hashable, Sendable {
        let target: String
        let accepted: ImageFileFormat?
    }

    /// A resolved request, without its `If-None-Match` (each request brings its own). A class, so that a
    /// lookup hands out one reference rather than a copy of the request's many fields.
    final class Resolved: Sendable {
        /// For a file, as last checked; for an object, without its version (the store's latest is asked).
        let request: ServeRequest
        let route: ImageService.Route
        let path: String
        /// What a memory answer needs, read from ``request`` once: a file's response key and until when its
        /// check stands, or an object's store and key.
        let check: Check
        /// The request's `Content-Disposition` (``ServeRequest/disposition``), read from ``request`` once so
        /// that a hit does not copy the request to read it.
        let disposition: ContentDisposition?

        /// What the memory answer of a resolved request rests on.
        enum Check: Sendable {
            case file(key: String, until: ContinuousClock.Instant)
            case object(any ObjectStore, key: String)
            case none
        }

        init(request: ServeRequest, route: ImageService.Route, path: String) {
            self.request = request
            self.route = route
            self.path = path
            disposition = request.disposition
            switch request.source {
            case .file(let file, let directory): check = .file(key: request.key, until: file.checkedAt + directory.recheck)
            case .object(let store, let key, nil): check = .object(store, key: key)
            case .object, .remote: check = .none
            }
        }
    }

    /// Targets kept at most.
    static let capacity = 16_384

    /// Keys hashed before the lock is taken: a hit's two event loops then hold it for a word's hash and
    /// the recency move, not for SipHash over the whole target.
    private let entries = LockedValue(LRUMap<Prehashed<Key>, Resolved>())

    /// The request `key` resolved to last, made the most recently used.
    func get(_ key: Key) -> Resolved? {
        let key = Prehashed(key)
        return entries.withLock { $0.touchValue(key) }
    }

    /// Records that `key` resolved to `resolved`; the least recently used target goes when the map is full.
    func record(_ key: Key, _ resolved: Resolved) {
        let key = Prehashed(key)
        entries.withLock { map in
            map.insert(key, value: resolved, cost: 1)
            while map.count > Self.capacity, map.removeOldest() != nil {}
        }
    }

    /// The number of targets kept.
    var count: Int { entries.withLock { $0.count } }
}
#endif
