import TesseraImaging
import Foundation

/// One committed entry, as listed by ``ImageTable/entries()``.
public struct TableEntry: Sendable, Hashable {
    /// The entity id.
    public var entityID: UUID
    /// The source id.
    public var sourceID: UUID
    /// The slot index.
    public var slot: Int
}
