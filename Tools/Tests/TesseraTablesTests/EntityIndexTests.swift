import Foundation
import Testing
@testable import TesseraTables
import TesseraTestSupport

/// The entity index (entity id → slot) against a `Dictionary` doing the same: inserts, replacements and
/// removals in random order, through growth and through the removals' shifting of colliding entries.
@Suite("Entity index")
struct EntityIndexTests {
    /// Ids from few distinct values, so that the same ids come back often (replaced, removed, added again).
    static func id(_ n: Int) -> UUID { UUID(hashing: "entity-\(n)") }

    @Test func agreesWithADictionaryThroughInsertsReplacementsAndRemovals() {
        var index = EntityIndex()
        var reference: [UUID: Int32] = [:]
        var random = SeededGenerator(seed: 31)
        for step in 0..<60_000 {
            let id = Self.id(Int.random(in: 0..<3_000, using: &random))
            if Int.random(in: 0..<3, using: &random) == 0 {
                index[id] = nil
                reference[id] = nil
            } else {
                let slot = Int32(step)
                index[id] = slot
                reference[id] = slot
            }
            if step % 997 == 0 {   // every id looked up now and then, present or not
                for n in 0..<3_000 { #expect(index[Self.id(n)] == reference[Self.id(n)]) }
            }
        }
        #expect(index.count == reference.count)
        #expect(Dictionary(uniqueKeysWithValues: index.entries.map { ($0.id, $0.slot) }) == reference)
        #expect(index.slotValues.sorted() == reference.values.sorted())
    }

    @Test func emptiesAndFillsAgain() {
        var index = EntityIndex()
        index.reserveCapacity(500)
        for n in 0..<500 { index[Self.id(n)] = Int32(n) }
        for n in 0..<500 { index[Self.id(n)] = nil }
        #expect(index.count == 0 && index.entries.isEmpty)
        #expect((0..<500).allSatisfy { index[Self.id($0)] == nil })
        for n in 0..<500 { index[Self.id(n)] = Int32(n + 1) }
        #expect((0..<500).allSatisfy { index[Self.id($0)] == Int32($0 + 1) })
    }
}
