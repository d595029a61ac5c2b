import Foundation

/// A least-recently-used list with O(1) lookup, touch, insertion and eviction: a dictionary of keys to
/// slots of a node array linked in use order. Not thread-safe: ``MemoryCache`` guards it with a mutex.
struct LRUStorage<Key: Hashable, Value> {
    struct Node {
        var key: Key
        var value: Value
        var cost: Int
        var insertedAt: Date
        var newer = -1
        var older = -1
    }

    private var nodes: [Node?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    /// The most recently used slot.
    private var newest = -1
    /// The least recently used slot.
    private var oldest = -1
    private(set) var totalCost = 0

    var count: Int { index.count }

    /// The node for `key`, made the most recently used.
    mutating func touch(_ key: Key) -> Node? {
        guard let slot = index[key] else { return nil }
        unlink(slot)
        linkAsNewest(slot)
        return nodes[slot]
    }

    /// The node for `key` without changing the order.
    func peek(_ key: Key) -> Node? { index[key].flatMap { nodes[$0] } }

    /// Inserts or replaces `key` as the most recently used.
    mutating func insert(_ key: Key, value: Value, cost: Int, at date: Date) {
        remove(key)
        let node = Node(key: key, value: value, cost: cost, insertedAt: date)
        let slot: Int
        if let free = freeSlots.popLast() { slot = free; nodes[slot] = node } else { slot = nodes.count; nodes.append(node) }
        index[key] = slot
        totalCost += cost
        linkAsNewest(slot)
    }

    /// Removes `key`; returns its node.
    @discardableResult
    mutating func remove(_ key: Key) -> Node? {
        guard let slot = index.removeValue(forKey: key), let node = nodes[slot] else { return nil }
        unlink(slot)
        nodes[slot] = nil
        freeSlots.append(slot)
        totalCost -= node.cost
        return node
    }

    /// Removes and returns the least recently used node.
    mutating func removeOldest() -> Node? {
        guard oldest >= 0, let key = nodes[oldest]?.key else { return nil }
        return remove(key)
    }

    /// Removes everything.
    mutating func removeAll() {
        self = LRUStorage()
    }

    /// Keys from least to most recently used (for tests and diagnostics).
    var keysOldestFirst: [Key] {
        var keys: [Key] = []
        var slot = oldest
        while slot >= 0, let node = nodes[slot] { keys.append(node.key); slot = node.newer }
        return keys
    }

    private mutating func unlink(_ slot: Int) {
        guard let node = nodes[slot] else { return }
        if node.newer >= 0 { nodes[node.newer]!.older = node.older } else { newest = node.older }
        if node.older >= 0 { nodes[node.older]!.newer = node.newer } else { oldest = node.newer }
        nodes[slot]!.newer = -1
        nodes[slot]!.older = -1
    }

    private mutating func linkAsNewest(_ slot: Int) {
        nodes[slot]!.older = newest
        nodes[slot]!.newer = -1
        if newest >= 0 { nodes[newest]!.newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
