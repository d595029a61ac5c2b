/// An intrusive doubly linked list over slot indices, most recently used first: O(1) insert at the
/// front, removal, replacement and "least recently used" lookup, with two `Int32` arrays and no
/// allocation per operation.
///
/// It holds exactly the slots that are committed, indexed and not referenced by a live image, so
/// its ``leastRecent`` slot is always one that may be replaced.
struct SlotRecency {
    private var prev: [Int32] = []
    private var next: [Int32] = []
    private var member: [Bool] = []
    private(set) var head: Int32 = -1
    private(set) var tail: Int32 = -1
    private(set) var count = 0

    /// Makes room for slot indices `0..<n` (shrinking drops slots that must not be members).
    mutating func resize(to n: Int) {
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
    func contains(_ slot: Int) -> Bool { slot < member.count && member[slot] }

    /// The least recently used slot, if any.
    var leastRecent: Int? { tail < 0 ? nil : Int(tail) }

    /// Inserts `slot` as the most recently used (no-op if already listed: moves it to the front).
    mutating func pushFront(_ slot: Int) {
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
    mutating func remove(_ slot: Int) {
        guard contains(slot) else { return }
        let p = prev[slot], n = next[slot]
        if p >= 0 { next[Int(p)] = n } else { head = n }
        if n >= 0 { prev[Int(n)] = p } else { tail = p }
        prev[slot] = -1; next[slot] = -1
        member[slot] = false
        count -= 1
    }

    /// Puts `new` (not listed) at `old`'s position and unlists `old`.
    mutating func replace(_ old: Int, with new: Int) {
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
    mutating func removeAll() {
        let n = prev.count
        self = SlotRecency()
        resize(to: n)
    }

    /// Slots from most to least recent (for tests and tools).
    var ordered: [Int] {
        var out: [Int] = []
        var s = head
        while s >= 0 { out.append(Int(s)); s = next[Int(s)] }
        return out
    }
}
