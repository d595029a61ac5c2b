/// The library's one least-recently-used map: keys to values with a cost each, O(1) lookup, touch,
/// insertion and eviction of the least recently used entry; a dictionary of keys to slots of a node
/// array, ordered by the one ``RecencyList``. Its users say only what a value costs and when they are
/// over their limits:
///
/// ```swift
/// map.insert(key, value: image, cost: image.byteCount)
/// while map.totalCost > limit, map.removeOldest() != nil {}
/// ```
///
/// Not thread-safe: its owner guards it (every user keeps it in a ``LockedValue``).
package struct LRUMap<Key: Hashable, Value> {
    /// One entry.
    package struct Node {
        package var key: Key
        package var value: Value
        package var cost: Int
    }

    private var nodes: [Node?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    private var recency = RecencyList()
    /// The sum of the entries' costs.
    package private(set) var totalCost = 0

    /// An empty map.
    package init() {}

    /// The number of entries.
    package var count: Int { index.count }

    /// The node of `key`, made the most recently used.
    package mutating func touch(_ key: Key) -> Node? {
        guard let slot = index[key] else { return nil }
        recency.pushFront(slot)
        return nodes[slot]
    }

    /// The node of `key` without changing the order.
    package func peek(_ key: Key) -> Node? { index[key].flatMap { nodes[$0] } }

    /// Inserts or replaces `key` as the most recently used.
    package mutating func insert(_ key: Key, value: Value, cost: Int) {
        remove(key)
        let node = Node(key: key, value: value, cost: cost)
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
    package mutating func remove(_ key: Key) -> Node? {
        guard let slot = index.removeValue(forKey: key), let node = nodes[slot] else { return nil }
        recency.remove(slot)
        nodes[slot] = nil
        freeSlots.append(slot)
        totalCost -= node.cost
        return node
    }

    /// The least recently used key.
    package var oldestKey: Key? { recency.leastRecent.flatMap { nodes[$0]?.key } }

    /// Removes and returns the least recently used node.
    @discardableResult
    package mutating func removeOldest() -> Node? {
        guard let slot = recency.leastRecent, let key = nodes[slot]?.key else { return nil }
        return remove(key)
    }

    /// Removes everything.
    package mutating func removeAll() {
        self = LRUMap()
    }

    /// Calls `body` with every node, from least to most recently used (no order change).
    package func forEach(_ body: (Node) throws -> Void) rethrows {
        for slot in recency.ordered.reversed() { if let node = nodes[slot] { try body(node) } }
    }

    /// Keys from least to most recently used (for tests and diagnostics).
    package var keysOldestFirst: [Key] {
        recency.ordered.reversed().compactMap { nodes[$0]?.key }
    }
}
