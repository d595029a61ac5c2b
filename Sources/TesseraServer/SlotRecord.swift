#if Serving
import Crypto
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// What a preset's table slot holds, written in the slot itself so that it lives and dies with the
/// entry: the image's size inside the slot and how complete its decode was, bound to the entry's source id.
///
/// A preset whose slot is W×H (``PresetTable/slotSize(of:)``) has a table of W×(H+1): rows `0..<H` hold
/// the image at the top-left corner (the whole slot for a `fill` of a large source, 300×200 of a 300×300
/// slot for a `fit` of a 3:2 photo), row `H` holds this record.
/// The table's pixel checksum covers the record with the pixels, and the entry's commit word covers
/// that checksum, so a record is never torn from its image. Its first 33 bytes:
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 8 | magic `"TSRSLOT2"` |
/// | 8 | 4 | content width (little-endian) |
/// | 12 | 4 | content height |
/// | 16 | 16 | SHA-256 of (source id, content width, content height, box width, box height, integrity), first 16 bytes |
/// | 32 | 1 | integrity: 0 intact, 1 damaged, 2 truncated |
///
/// The source id is a hash of everything that shapes the pixels (path, source version, preset, recipe),
/// so a record copied to another entry, or read by a preset of another slot, does not verify.
/// A truncated source's entry is kept like any other: it answers only for that version of the file
/// (size, modification time, inode), so once the file is whole its new version misses and is decoded again.
/// ``validate(_:slot:)`` checks the digest and that the size lies inside the box before any pixel
/// is read; a record that fails is a miss (the entry is rebuilt), never an answer.
@_spi(Testing) public struct SlotRecord: Sendable, Hashable {
    /// The image's size inside the slot.
    public let content: PixelSize
    /// How complete the decode that filled the slot was.
    public let integrity: DecodeIntegrity

    static let magic = Array("TSRSLOT2".utf8)
    /// Bytes of the record (the row is at least 64 bytes: rows are 64-byte aligned).
    static let byteCount = 33
    static let integrityCodes: [DecodeIntegrity] = [.intact, .damaged, .truncated]

    /// A record of `content`, decoded with `integrity`.
    public init(content: PixelSize, integrity: DecodeIntegrity = .intact) {
        self.content = content
        self.integrity = integrity
    }

    /// Writes the record for an entry of `sourceID` in a slot of `box` at `row`, which has at least
    /// ``byteCount`` bytes. `digestSize` (tests only) signs another size than the one written.
    public func write(to row: UnsafeMutableRawPointer, sourceID: UUID, box: PixelSize, digestSize: PixelSize? = nil) {
        for (offset, byte) in Self.magic.enumerated() { row.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self) }
        row.storeBytes(of: UInt32(truncatingIfNeeded: content.width).littleEndian, toByteOffset: 8, as: UInt32.self)
        row.storeBytes(of: UInt32(truncatingIfNeeded: content.height).littleEndian, toByteOffset: 12, as: UInt32.self)
        for (offset, byte) in Self.digest(sourceID: sourceID, content: digestSize ?? content, box: box, integrity: integrity).enumerated() {
            row.storeBytes(of: byte, toByteOffset: 16 + offset, as: UInt8.self)
        }
        row.storeBytes(of: Self.code(of: integrity), toByteOffset: 32, as: UInt8.self)
    }

    /// The stored byte of `integrity`.
    static func code(of integrity: DecodeIntegrity) -> UInt8 {
        UInt8(integrityCodes.firstIndex(of: integrity) ?? 0)
    }

    /// The record in `image` (an entry of a preset whose slot is `box`, one row taller), when it verifies:
    /// magic, digest for the entry's source id, and a size inside the slot.
    static func validate(_ image: TableImage, slot box: PixelSize) -> SlotRecord? {
        guard image.layout.width == box.width, image.layout.height == box.height + 1,
              image.layout.bytesPerRow >= byteCount else { return nil }
        return image.withUnsafeBytes { bytes -> SlotRecord? in
            let row = UnsafeRawBufferPointer(rebasing: bytes[(box.height * image.layout.bytesPerRow)...])
            guard row.count >= byteCount, Array(row[0..<8]) == magic else { return nil }
            let width = Int(UInt32(littleEndian: row.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
            let height = Int(UInt32(littleEndian: row.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
            guard (1...box.width).contains(width), (1...box.height).contains(height) else { return nil }
            let content = PixelSize(width: width, height: height)
            let code = Int(row[32])
            guard code < integrityCodes.count else { return nil }
            let integrity = integrityCodes[code]
            guard Array(row[16..<32]) == digest(sourceID: image.sourceID, content: content, box: box, integrity: integrity) else { return nil }
            return SlotRecord(content: content, integrity: integrity)
        }
    }

    /// The first 16 bytes of SHA-256 over the source id's bytes, the four sizes (little-endian) and the
    /// integrity's byte.
    static func digest(sourceID: UUID, content: PixelSize, box: PixelSize, integrity: DecodeIntegrity) -> [UInt8] {
        var hasher = SHA256()
        withUnsafeBytes(of: sourceID.uuid) { hasher.update(bufferPointer: $0) }
        for value in [content.width, content.height, box.width, box.height] {
            withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { hasher.update(bufferPointer: $0) }
        }
        withUnsafeBytes(of: code(of: integrity)) { hasher.update(bufferPointer: $0) }
        return Array(hasher.finalize().prefix(16))
    }
}

/// The image part of a preset's table entry: its top-left `content` pixels, read in place (no copy),
/// with the slot's row stride. Keeps the entry (and so its pixels) alive.
struct SlotView: BitmapImage {
    let layout: BitmapLayout
    let entry: TableImage
    /// How complete the decode that filled the slot was.
    let integrity: DecodeIntegrity

    /// The view of `record.content` in `entry`; `nil` when that does not lie inside the entry's slot.
    init?(_ entry: TableImage, record: SlotRecord) {
        let content = record.content
        guard content.width <= entry.layout.width, content.height < entry.layout.height,
              let layout = try? BitmapLayout(width: content.width, height: content.height, style: entry.layout.style,
                                             bytesPerRow: entry.layout.bytesPerRow),
              layout.byteCount <= entry.layout.byteCount else { return nil }
        self.layout = layout
        self.entry = entry
        self.integrity = record.integrity
    }

    func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try entry.withUnsafeBytes { (bytes) throws(E) -> R in
            try body(UnsafeRawBufferPointer(rebasing: bytes[0..<layout.byteCount]))
        }
    }
}
#endif
