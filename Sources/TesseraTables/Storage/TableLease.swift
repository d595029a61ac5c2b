@_spi(Internal) import TesseraImaging
/// A slot's one lease object: every ``TableImage`` of the slot (and a writer drawing into it) holds
/// it, which keeps the mapping (and with it the file's lock) alive and tells the table that the slot
/// is referenced (``TableState/isReferenced(_:)``): while anyone but the table holds it, the slot's
/// pixels are not overwritten, moved or truncated away. Dropping a reference is a plain release,
/// without the table's lock.
final class TableLease: Sendable {
    let mapping: TableMapping
    let slot: Int
    let offset: Int

    init(mapping: TableMapping, slot: Int, offset: Int) {
        self.mapping = mapping
        self.slot = slot
        self.offset = offset
    }

    /// The first byte of the slot's pixels.
    var pointer: UnsafeRawPointer { UnsafeRawPointer(mapping.base + offset) }
}
