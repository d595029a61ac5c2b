#if Serving
import Foundation
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

/// A bounded in-memory LRU of encoded responses, by byte size (on the library's one LRU list).
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
    }

    private struct State {
        var slots: [String: Int] = [:]
        var entries: [(key: String, entry: Entry)?] = []
        var free: [Int] = []
        var recency = RecencyList()
        var bytes = 0
    }

    private let capacity: Int
    private let state = LockedValue(State())

    init(capacityBytes: Int) { capacity = capacityBytes }

    func get(_ key: String) -> Entry? {
        state.withLock { state in
            guard let slot = state.slots[key], let entry = state.entries[slot] else { return nil }
            state.recency.remove(slot)
            state.recency.pushFront(slot)
            return entry.entry
        }
    }

    func set(_ key: String, _ entry: Entry) {
        guard entry.bytes <= capacity / 4 else { return }   // one response never takes most of the cache
        state.withLock { state in
            if let slot = state.slots[key], let old = state.entries[slot] {
                state.bytes -= old.entry.bytes
                state.entries[slot] = (key, entry)
                state.bytes += entry.bytes
                state.recency.remove(slot)
                state.recency.pushFront(slot)
            } else {
                let slot: Int
                if let reused = state.free.popLast() { slot = reused } else {
                    slot = state.entries.count
                    state.entries.append(nil)
                    state.recency.resize(to: state.entries.count)
                }
                state.entries[slot] = (key, entry)
                state.slots[key] = slot
                state.bytes += entry.bytes
                state.recency.pushFront(slot)
            }
            while state.bytes > capacity, let victim = state.recency.leastRecent {
                state.recency.remove(victim)
                if let old = state.entries[victim] {
                    state.bytes -= old.entry.bytes
                    state.slots[old.key] = nil
                }
                state.entries[victim] = nil
                state.free.append(victim)
            }
        }
    }

    var byteCount: Int { state.withLock { $0.bytes } }
}

#endif
