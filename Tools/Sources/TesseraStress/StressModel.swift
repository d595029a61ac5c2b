import Foundation

/// What the stress table must hold according to the writer's journal: entries most recently used
/// first, each with its source serial, evicting the least recently used one when a store of a new
/// entity finds the table full (the table's policy while no image is live, as in the writer).
struct StressModel {
    /// Entity indices, most recently used first.
    private(set) var order: [Int] = []
    /// The source serial of each entry.
    private(set) var serials: [Int: UInt64] = [:]
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { order.count }

    func contains(_ k: Int) -> Bool { serials[k] != nil }

    /// The entry a store of a new entity would evict now, if any.
    var victim: Int? { order.count >= capacity ? order.last : nil }

    mutating func touch(_ k: Int) {
        guard let i = order.firstIndex(of: k) else { return }
        order.remove(at: i)
        order.insert(k, at: 0)
    }

    mutating func store(_ k: Int, serial: UInt64) {
        if contains(k) {
            delete(k)
        } else if let v = victim {
            delete(v)
        }
        order.insert(k, at: 0)
        serials[k] = serial
    }

    mutating func delete(_ k: Int) {
        order.removeAll { $0 == k }
        serials[k] = nil
    }

    /// Appends an entry as the least recently used (for loading a baseline written MRU first).
    mutating func appendLeastRecent(_ k: Int, serial: UInt64) {
        guard !contains(k) else { return }
        order.append(k)
        serials[k] = serial
    }
}
