import TesseraImaging
/// The free slots of a table (no entry, no live image), as a binary min-heap so new entries go to
/// the lowest free slot: the file stays dense and ``ImageTable/compact()`` has less to move.
struct FreeSlots {
    private var heap: [Int32] = []

    /// The number of free slots.
    var count: Int { heap.count }

    /// The lowest free slot, without removing it.
    var lowest: Int? { heap.first.map(Int.init) }

    /// Adds a slot (the caller guarantees it is not already present).
    mutating func insert(_ slot: Int) {
        heap.append(Int32(slot))
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[parent] > heap[i] else { break }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    /// Removes and returns the lowest free slot.
    mutating func popLowest() -> Int? {
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

    /// Replaces the contents with `slots` (any order).
    mutating func rebuild(_ slots: [Int]) {
        heap = slots.sorted().map { Int32($0) }   // a sorted array is a valid min-heap
    }
}
