/// The one least-recently-used list of the library: an intrusive doubly linked list over slot indices
/// `0..<n`, most recently used first, with O(1) insert at the front, removal, replacement and "least
/// recently used" lookup, in one array of links (a slot's neighbours and whether it is listed, in 12
/// bytes, so moving a slot touches one cache line per slot involved) with no allocation per operation.
///
/// Users keep their values in their own slot-indexed storage (an image table lists the slots that may
/// be replaced; ``LRUMap`` lists its entries). Not thread-safe: its owner guards it.
@_spi(Internal) public struct RecencyList {
    /// An empty list with room for no slots (see ``resize(to:)``).
    public init() {}

    /// A slot's place: its neighbours (-1: none) and whether it is listed.
    private struct Link {
        var prev: Int32 = -1
        var next: Int32 = -1
        var member = false
    }

    private var links: [Link] = []
    public private(set) var head: Int32 = -1
    public private(set) var tail: Int32 = -1
    public private(set) var count = 0

    /// Makes room for slot indices `0..<n` (shrinking drops slots that must not be members).
    public mutating func resize(to n: Int) {
        if n < links.count {
            precondition(!links[n...].contains { $0.member }, "shrinking over listed slots")
            links.removeLast(links.count - n)
        } else {
            links.append(contentsOf: repeatElement(Link(), count: n - links.count))
        }
    }

    /// Whether `slot` is in the list.
    public func contains(_ slot: Int) -> Bool { slot < links.count && links[slot].member }

    /// The least recently used slot, if any.
    public var leastRecent: Int? { tail < 0 ? nil : Int(tail) }

    /// Inserts `slot` as the most recently used (no-op if already listed: moves it to the front).
    public mutating func pushFront(_ slot: Int) {
        let s = Int32(slot)
        if head == s { return }
        if links[slot].member { remove(slot) }
        links[slot] = Link(prev: -1, next: head, member: true)
        if head >= 0 { links[Int(head)].prev = s } else { tail = s }
        head = s
        count += 1
    }

    /// Removes `slot` if listed.
    public mutating func remove(_ slot: Int) {
        guard contains(slot) else { return }
        let p = links[slot].prev, n = links[slot].next
        if p >= 0 { links[Int(p)].next = n } else { head = n }
        if n >= 0 { links[Int(n)].prev = p } else { tail = p }
        links[slot] = Link()
        count -= 1
    }

    /// Puts `new` (not listed) at `old`'s position and unlists `old`.
    public mutating func replace(_ old: Int, with new: Int) {
        guard contains(old), !contains(new) else { return }
        let p = links[old].prev, n = links[old].next, s = Int32(new)
        links[new] = Link(prev: p, next: n, member: true)
        if p >= 0 { links[Int(p)].next = s } else { head = s }
        if n >= 0 { links[Int(n)].prev = s } else { tail = s }
        links[old] = Link()
    }

    /// Empties the list.
    public mutating func removeAll() {
        let n = links.count
        self = RecencyList()
        resize(to: n)
    }

    /// Slots from most to least recent (for tests and tools).
    public var ordered: [Int] {
        var out: [Int] = []
        var s = head
        while s >= 0 { out.append(Int(s)); s = links[Int(s)].next }
        return out
    }
}
