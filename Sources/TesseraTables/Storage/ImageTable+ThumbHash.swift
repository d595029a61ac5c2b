import Foundation
@_spi(Internal) import TesseraImaging

extension ImageTable {
    /// The ThumbHash kept beside the entry for `entityID`, or `nil` when there is no such entry (with a
    /// `sourceID`, none made from that source), or the format does not ``ImageFormat/storesThumbHash``.
    ///
    /// Reads the 64 bytes after the entry's pixels and never the pixels themselves: the hash carries its
    /// own checksum over the entity id, the source id and its bytes (``ImageFormat/placeholderBytes``), so
    /// a hash left by an earlier entry of the slot, or torn by a crash, is not answered. Does not change
    /// the entry's recency: showing a placeholder is not a use of the image.
    public func thumbHash(for entityID: UUID, sourceID: UUID? = nil) -> ThumbHash? {
        guard format.storesThumbHash else { return nil }
        let found = state.withLock { s -> (lease: TableLease, source: UUID)? in
            guard let slot = s.lookup(entityID, sourceID: sourceID) else { return nil }
            return (s.reference(slot), s.records[slot].sourceID)
        }
        guard let found else { return nil }
        // The lease keeps the slot from being reused while its bytes are read.
        return withExtendedLifetime(found.lease) {
            Self.readThumbHash(at: found.lease.pointer + layout.byteCount, entityID: entityID, sourceID: found.source)
        }
    }

    /// Hashes the pixels just drawn for an entry and writes the hash after them (called by `store` before
    /// the entry is committed, so the commit publishes pixels and hash together). An image the hash
    /// cannot be computed for leaves length 0: no placeholder.
    func writeThumbHash(of image: TableImage, entityID: UUID, sourceID: UUID) {
        let area = UnsafeMutableRawPointer(mutating: image.lease.pointer + layout.byteCount)
        let bytes = (try? ThumbHash(image: image).bytes) ?? []
        let count = bytes.count <= Self.maximumThumbHashBytes ? bytes.count : 0
        area.initializeMemory(as: UInt8.self, repeating: 0, count: ImageFormat.placeholderBytes)
        area.storeBytes(of: UInt8(count), as: UInt8.self)
        bytes.prefix(count).withUnsafeBytes { (area + 1).copyMemory(from: $0.baseAddress!, byteCount: count) }
        area.storeBytes(of: Self.thumbHashChecksum(area, entityID: entityID, sourceID: sourceID),
                        toByteOffset: Self.thumbHashChecksumOffset, as: UInt64.self)
    }

    /// The hash stored at `area` for the entry of `entityID` made from `sourceID`, if its checksum holds and
    /// the bytes are a well-formed ThumbHash.
    static func readThumbHash(at area: UnsafeRawPointer, entityID: UUID, sourceID: UUID) -> ThumbHash? {
        let count = Int(area.load(as: UInt8.self))
        guard count > 0, count <= maximumThumbHashBytes,
              area.loadUnaligned(fromByteOffset: thumbHashChecksumOffset, as: UInt64.self)
                == thumbHashChecksum(area, entityID: entityID, sourceID: sourceID)
        else { return nil }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: area + 1, count: count))
        return try? ThumbHash(bytes: bytes)
    }

    /// The most hash bytes the area holds: 64 minus the length byte and the 8-byte checksum.
    static let maximumThumbHashBytes = ImageFormat.placeholderBytes - 1 - 8
    /// Where the area's checksum sits.
    static let thumbHashChecksumOffset = ImageFormat.placeholderBytes - 8

    /// The checksum of an area: ``PixelChecksum`` of its first 56 bytes (length and hash, zero-padded),
    /// mixed with the entity and source ids.
    private static func thumbHashChecksum(_ area: UnsafeRawPointer, entityID: UUID, sourceID: UUID) -> UInt64 {
        let body = PixelChecksum.hash(area, count: thumbHashChecksumOffset)
        return withUnsafeBytes(of: (entityID.uuid, sourceID.uuid)) { ids in
            let words = ids.bindMemory(to: UInt64.self)
            return PixelChecksum.hash((body, words[0], words[1], words[2], words[3], 0x5448_554D_4248_5348, 0, 0))
        }
    }
}
