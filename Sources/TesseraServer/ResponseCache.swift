#if Serving
import Foundation
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

/// A bounded in-memory LRU of encoded responses, by byte size (the library's one `LRUMap`).
final class ResponseCache: Sendable {
    struct Entry: Sendable {
        /// Encoded once; every hit shares this storage.
        var body: ByteBuffer
        /// What the entry holds in memory: a `ByteBuffer`'s storage is the body's size rounded up to a
        /// power of two, and that is what the cache's capacity counts.
        var bytes: Int { body.capacity }
        var contentType: String
        var etag: String
        /// How complete the decode behind the body was (`X-Tessera-Decode`, and a short `Cache-Control`
        /// for a truncated source).
        var integrity: DecodeIntegrity = .intact
        /// The status line and header fields of this entry's memory hit, all but `Date`, made once with the
        /// entry (``MemoryHitHandler/head(of:)``): a hit answered on the event loop writes them as they are.
        var hitHead: ByteBuffer
        /// When the source was last modified, in seconds since 1970 (`Last-Modified`); `nil` when unknown.
        var lastModified: Int?
        /// `X-Tessera-Animation` (``ImageService/ImageResponse/animation``).
        var animation: String?
        /// The source the answer was drawn from (``ServeRequest/sourceIdentity``), which a purge names.
        var source = ""

        /// An entry of `body`, with the fields of its memory hit made now (`cacheControl` is the service's
        /// for `integrity`).
        init(body: ByteBuffer, contentType: String, etag: String, integrity: DecodeIntegrity = .intact, cacheControl: String,
             lastModified: Int? = nil, animation: String? = nil) {
            self.lastModified = lastModified
            self.animation = animation
            self.body = body
            self.contentType = contentType
            self.etag = etag
            self.integrity = integrity
            hitHead = MemoryHitHandler.head(of: ImageService.ImageResponse(
                status: 200, bodyBuffer: body, contentType: contentType, etag: etag, cacheControl: cacheControl,
                outcome: .memory, integrity: integrity, lastModified: lastModified, animation: animation))
        }
    }

    /// An entry as the map holds it: one reference to copy out under the lock, where an ``Entry`` is six
    /// (its body's storage and five strings), each an atomic increment on a line the other event loops'
    /// hits share.
    private final class Held: Sendable {
        let entry: Entry
        init(_ entry: Entry) { self.entry = entry }
    }

    private let capacity: Int
    /// Entries by key in use order, each costing its ``Entry/bytes``; the key hashed before the lock is taken.
    private let entries = LockedValue(LRUMap<Prehashed<String>, Held>())

    init(capacityBytes: Int) { capacity = capacityBytes }

    func get(_ key: String) -> Entry? {
        let key = Prehashed(key)
        return entries.withLock { $0.touchValue(key) }?.entry
    }

    func set(_ key: String, _ entry: Entry) {
        guard entry.bytes <= capacity / 4 else { return }   // one response never takes most of the cache
        let key = Prehashed(key), held = Held(entry)
        entries.withLock { entries in
            entries.insert(key, value: held, cost: entry.bytes)
            while entries.totalCost > capacity, entries.removeOldest() != nil {}
        }
    }

    var byteCount: Int { entries.withLock { $0.totalCost } }

    /// Removes every entry drawn from `source` (``Entry/source``); how many. A scan of the whole cache,
    /// for a purge (an operator's request), never on a request's path.
    func removeAll(source: String) -> Int {
        entries.withLock { entries in
            var keys: [Prehashed<String>] = []
            entries.forEach { node in if node.value.entry.source == source { keys.append(node.key) } }
            for key in keys { _ = entries.remove(key) }
            return keys.count
        }
    }
}

#endif
