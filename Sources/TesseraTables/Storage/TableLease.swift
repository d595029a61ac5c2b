import TesseraImaging
/// One live reference to a slot: keeps the table and its mapping alive and, while it exists, the
/// slot's pixels unchanged (the table counts it in the slot's live-reference count).
final class TableLease: Sendable {
    let table: ImageTable
    let mapping: TableMapping
    let slot: Int
    let offset: Int

    /// Wraps a reference the table has already counted (the caller pinned `slot`).
    init(table: ImageTable, mapping: TableMapping, slot: Int, offset: Int) {
        self.table = table
        self.mapping = mapping
        self.slot = slot
        self.offset = offset
    }

    /// The first byte of the slot's pixels.
    var pointer: UnsafeRawPointer { UnsafeRawPointer(mapping.base + offset) }

    deinit { table.release(slot: slot, mapping: mapping) }
}
