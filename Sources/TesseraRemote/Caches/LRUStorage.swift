import Foundation
import TesseraImaging

/// The memory cache's entries in use order, with O(1) lookup, touch, insertion and eviction: a
/// dictionary of keys to slots of a node array, ordered by the library's one ``RecencyList``. Not
/// thread-safe: ``MemoryCache`` guards it with its lock.
struct LRUStorage<Key: Hashable, Value> {
    struct Node {
        var key: Key
        var value: Value
        var cost: Int
        var insertedAt: Date
    }

    private var nodes: [Node?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    private var recency = RecencyList()
    private(set) var totalCost = 0

    var count: Int { index.count }

    /// The node for `key`, made the most recently used.
    mutating func touch(_ key: Key) -> Node? {
        guard let slot = index[key] else { return nil }
        recency.pushFront(slot)
        return nodes[slot]
    }

    /// The node for `key` without changing the order.
    func peek(_ key: Key) -> Node? { index[key].flatMap { nodes[$0] } }

    /// Inserts or replaces `key` as the most recently used.
    mutating func insert(_ key: Key, value: Value, cost: Int, at date: Date) {
        remove(key)
        let node = Node(key: key, value: value, cost: cost, insertedAt: date)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
            recency.resize(to: nodes.count)
        }
        index[key] = slot
        totalCost += cost
        recency.pushFront(slot)
    }

    /// Removes `key`; returns its node.
    @discardableResult
    mutating func remove(_ key: Key) -> Node? {
        guard let slot = index.removeValue(forKey: key), let node = nodes[slot] else { return nil }
        recency.remove(slot)
        nodes[slot] = nil
        freeSlots.append(slot)
        totalCost -= node.cost
        return node
    }

    /// Removes and returns the least recently used node.
    mutating func removeOldest() -> Node? {
        guard let slot = recency.leastRecent, let key = nodes[slot]?.key else { return nil }
        return remove(key)
    }

    /// Removes everything.
    mutating func removeAll() {
        self = LRUStorage()
    }

    /// Keys from least to most recently used (for tests and diagnostics).
    var keysOldestFirst: [Key] {
        recency.ordered.reversed().compactMap { nodes[$0]?.key }
    }
}
