import TesseraImaging
/// The slots of a table this participant believes free (no entry, no live image, no writer), as a
/// binary min-heap so new entries go to the lowest free slot: the file stays dense and
/// ``ImageTable/compact()`` has less to move. Inserting a slot twice keeps one; ``remove(_:)`` takes a
/// slot out lazily (the heap skips it when it comes up). With other processes sharing the table the
/// set is a hint: a reservation checks the slot's shared state first (``TableState/reserveSlot(fileState:)``).
struct FreeSlots {
    private var heap: [Int32] = []
    /// Whether each slot is in the set (the heap may also hold stale copies of removed slots).
    private var member: [Bool] = []

    /// The number of free slots.
    private(set) var count = 0

    /// Whether `slot` is in the set.
    func contains(_ slot: Int) -> Bool { slot < member.count && member[slot] }

    /// The lowest free slot, without removing it.
    var lowest: Int? {
        mutating get {
            dropStale()
            return heap.first.map(Int.init)
        }
    }

    /// Adds a slot (nothing if present).
    mutating func insert(_ slot: Int) {
        if slot >= member.count { member.append(contentsOf: repeatElement(false, count: slot + 1 - member.count)) }
        guard !member[slot] else { return }
        member[slot] = true
        count += 1
        heap.append(Int32(slot))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[parent] > heap[i] else { break }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    /// Takes `slot` out of the set (nothing if absent).
    mutating func remove(_ slot: Int) {
        guard contains(slot) else { return }
        member[slot] = false
        count -= 1
    }

    /// Removes and returns the lowest free slot.
    mutating func popLowest() -> Int? {
        dropStale()
        guard let top = popTop() else { return nil }
        member[top] = false
        count -= 1
        return top
    }

    /// Replaces the contents with `slots` (any order).
    mutating func rebuild(_ slots: [Int]) {
        heap = slots.sorted().map { Int32($0) }   // a sorted array is a valid min-heap
        member = Array(repeating: false, count: (slots.max() ?? -1) + 1)
        for slot in slots { member[slot] = true }
        count = slots.count
    }

    /// Pops heap tops that are no longer members.
    private mutating func dropStale() {
        while let top = heap.first, !member[Int(top)] { _ = popTop() }
    }

    private mutating func popTop() -> Int? {
        guard !heap.isEmpty else { return nil }
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < heap.count, heap[l] < heap[m] { m = l }
                if r < heap.count, heap[r] < heap[m] { m = r }
                if m == i { break }
                heap.swapAt(i, m)
                i = m
            }
        }
        return Int(top)
    }
}
