/// The one least-recently-used list of the library: an intrusive doubly linked list over slot indices
/// `0..<n`, most recently used first, with O(1) insert at the front, removal, replacement and "least
/// recently used" lookup, in two `Int32` arrays with no allocation per operation.
///
/// Users keep their values in their own slot-indexed storage (an image table lists the slots that may
/// be replaced; ``LRUMap`` lists its entries). Not thread-safe: its owner guards it.
package struct RecencyList {
    /// An empty list with room for no slots (see ``resize(to:)``).
    package init() {}

    private var prev: [Int32] = []
    private var next: [Int32] = []
    private var member: [Bool] = []
    package private(set) var head: Int32 = -1
    package private(set) var tail: Int32 = -1
    package private(set) var count = 0

    /// Makes room for slot indices `0..<n` (shrinking drops slots that must not be members).
    package mutating func resize(to n: Int) {
        if n < prev.count {
            precondition(!member[n...].contains(true), "shrinking over listed slots")
            prev.removeLast(prev.count - n); next.removeLast(next.count - n); member.removeLast(member.count - n)
        } else {
            prev.append(contentsOf: repeatElement(-1, count: n - prev.count))
            next.append(contentsOf: repeatElement(-1, count: n - next.count))
            member.append(contentsOf: repeatElement(false, count: n - member.count))
        }
    }

    /// Whether `slot` is in the list.
    package func contains(_ slot: Int) -> Bool { slot < member.count && member[slot] }

    /// The least recently used slot, if any.
    package var leastRecent: Int? { tail < 0 ? nil : Int(tail) }

    /// Inserts `slot` as the most recently used (no-op if already listed: moves it to the front).
    package mutating func pushFront(_ slot: Int) {
        if member[slot] { remove(slot) }
        let s = Int32(slot)
        prev[slot] = -1
        next[slot] = head
        if head >= 0 { prev[Int(head)] = s } else { tail = s }
        head = s
        member[slot] = true
        count += 1
    }

    /// Removes `slot` if listed.
    package mutating func remove(_ slot: Int) {
        guard contains(slot) else { return }
        let p = prev[slot], n = next[slot]
        if p >= 0 { next[Int(p)] = n } else { head = n }
        if n >= 0 { prev[Int(n)] = p } else { tail = p }
        prev[slot] = -1; next[slot] = -1
        member[slot] = false
        count -= 1
    }

    /// Puts `new` (not listed) at `old`'s position and unlists `old`.
    package mutating func replace(_ old: Int, with new: Int) {
        guard contains(old), !contains(new) else { return }
        let p = prev[old], n = next[old], s = Int32(new)
        prev[new] = p; next[new] = n
        if p >= 0 { next[Int(p)] = s } else { head = s }
        if n >= 0 { prev[Int(n)] = s } else { tail = s }
        member[new] = true
        member[old] = false
        prev[old] = -1; next[old] = -1
    }

    /// Empties the list.
    package mutating func removeAll() {
        let n = prev.count
        self = RecencyList()
        resize(to: n)
    }

    /// Slots from most to least recent (for tests and tools).
    package var ordered: [Int] {
        var out: [Int] = []
        var s = head
        while s >= 0 { out.append(Int(s)); s = next[Int(s)] }
        return out
    }
}
