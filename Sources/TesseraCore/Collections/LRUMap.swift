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
/// Not thread-safe: its owner guards it (every user keeps it in a ``LockedValue``). Its operations are
/// inlinable, so a user's module specializes them for its key and value types (a hit on the server's hot
/// path makes two lookups) instead of calling the generic code through metadata.
@_spi(Internal) public struct LRUMap<Key: Hashable, Value> {
    /// One entry.
    public struct Node {
        public var key: Key
        public var value: Value
        public var cost: Int

        @inlinable
        public init(key: Key, value: Value, cost: Int) {
            self.key = key
            self.value = value
            self.cost = cost
        }
    }

    @usableFromInline var nodes: [Node?] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var index: [Key: Int] = [:]
    @usableFromInline var recency = RecencyList()
    @usableFromInline var costSum = 0

    /// An empty map.
    @inlinable
    public init() {}

    /// The sum of the entries' costs.
    @inlinable
    public var totalCost: Int { costSum }

    /// The number of entries.
    @inlinable
    public var count: Int { index.count }

    /// The node of `key`, made the most recently used.
    @inlinable
    public mutating func touch(_ key: Key) -> Node? {
        guard let slot = index[key] else { return nil }
        recency.pushFront(slot)
        return nodes[slot]
    }

    /// ``touch(_:)`` that copies only the value out (not the key): under a lock, every reference copied is
    /// an atomic increment inside the critical section.
    @inlinable
    public mutating func touchValue(_ key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        recency.pushFront(slot)
        return nodes[slot]?.value
    }

    /// The node of `key` without changing the order.
    @inlinable
    public func peek(_ key: Key) -> Node? { index[key].flatMap { nodes[$0] } }

    /// Inserts or replaces `key` as the most recently used.
    @inlinable
    public mutating func insert(_ key: Key, value: Value, cost: Int) {
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
        costSum += cost
        recency.pushFront(slot)
    }

    /// Removes `key`; returns its node.
    @inlinable
    @discardableResult
    public mutating func remove(_ key: Key) -> Node? {
        guard let slot = index.removeValue(forKey: key), let node = nodes[slot] else { return nil }
        recency.remove(slot)
        nodes[slot] = nil
        freeSlots.append(slot)
        costSum -= node.cost
        return node
    }

    /// The least recently used key.
    @inlinable
    public var oldestKey: Key? { recency.leastRecent.flatMap { nodes[$0]?.key } }

    /// Removes and returns the least recently used node.
    @inlinable
    @discardableResult
    public mutating func removeOldest() -> Node? {
        guard let slot = recency.leastRecent, let key = nodes[slot]?.key else { return nil }
        return remove(key)
    }

    /// Removes everything.
    @inlinable
    public mutating func removeAll() {
        self = LRUMap()
    }

    /// Calls `body` with every node, from least to most recently used (no order change).
    @inlinable
    public func forEach(_ body: (Node) throws -> Void) rethrows {
        for slot in recency.ordered.reversed() { if let node = nodes[slot] { try body(node) } }
    }

    /// Keys from least to most recently used (for tests and diagnostics).
    @inlinable
    public var keysOldestFirst: [Key] {
        recency.ordered.reversed().compactMap { nodes[$0]?.key }
    }
}
