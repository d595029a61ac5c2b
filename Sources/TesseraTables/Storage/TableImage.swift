import TesseraImaging
import Foundation

/// An image in an ``ImageTable``: a view straight into the table's memory mapping, no copy.
///
/// While any copy of the value lives, the entry's pixels are neither overwritten nor moved, and the
/// table file stays mapped and locked (also after the ``ImageTable`` itself is gone). Dropping the
/// last copy takes no lock. Values are cheap to copy and
/// `Sendable`.
public struct TableImage: BitmapImage, CustomStringConvertible {
    /// Size, style and row stride (the format's ``ImageFormat/layout``).
    public let layout: BitmapLayout
    /// The entity this entry belongs to.
    public let entityID: UUID
    /// The source the entry was made from.
    public let sourceID: UUID
    let lease: TableLease

    /// The first pixel byte, for C and graphics code. Valid while this value (or a copy) lives:
    /// keep the `TableImage` alive for as long as the pointer is used (`withExtendedLifetime`).
    public var baseAddress: UnsafeRawPointer { lease.pointer }

    /// Calls `body` with the pixel bytes (`layout.byteCount` of them).
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try withExtendedLifetime(lease) { () throws(E) -> R in
            try body(UnsafeRawBufferPointer(start: lease.pointer, count: layout.byteCount))
        }
    }

    /// The slot the entry occupies (for tools and tests in this package).
    @_spi(Internal) public var slot: Int { lease.slot }

    /// `"TableImage(<entity> WxH style … slot n)"`.
    public var description: String { "TableImage(\(entityID) \(layout) slot \(lease.slot))" }
}
