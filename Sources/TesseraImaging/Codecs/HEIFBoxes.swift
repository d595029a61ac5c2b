/// The little of a HEIF file's box structure (ISO/IEC 14496-12) that ``HEIFDecoder`` reads itself,
/// before libheif parses anything: how many items the `meta` box declares, whether their references
/// form a cycle, and whether the top-level boxes run past the end of the data.
///
/// A box is a 32-bit big-endian size (header included), a four-letter type, and with size 1 a
/// 64-bit size after the type (a 16-byte header); size 0 means "to the end of the file".
enum HEIFBoxes {
    /// One box: its type and the byte range of its payload (after the header) in the data.
    struct Box {
        var type: String
        var payload: Range<Int>
        /// Whether the box's declared size goes past the end of the data (`payload` is clipped).
        var isClipped: Bool
    }

    /// The boxes in `range` of `bytes`, in order; stops at a box whose header is malformed (size
    /// smaller than its header) or cut off. `cutOff` reports a box or header that extends past `range`.
    static func boxes(in bytes: UnsafeRawBufferPointer, range: Range<Int>) -> (boxes: [Box], cutOff: Bool) {
        var boxes: [Box] = []
        var offset = range.lowerBound
        while offset < range.upperBound {
            guard range.upperBound - offset >= 8 else { return (boxes, true) }
            var size = Int(be32(bytes, offset))
            var header = 8
            if size == 1 {
                guard range.upperBound - offset >= 16 else { return (boxes, true) }
                let large = UInt64(be32(bytes, offset + 8)) << 32 | UInt64(be32(bytes, offset + 12))
                size = large > UInt64(Int.max / 2) ? Int.max / 2 : Int(large)
                header = 16
            } else if size == 0 {
                size = range.upperBound - offset
            }
            guard size >= header else { return (boxes, false) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let clipped = size > range.upperBound - offset
            let end = clipped ? range.upperBound : offset + size
            boxes.append(Box(type: type, payload: offset + header..<end, isClipped: clipped))
            if clipped { return (boxes, true) }
            offset = end
        }
        return (boxes, false)
    }

    /// The entry count of `meta`/`iinf` (a full box: version, flags, then a 16-bit count for
    /// version 0, 32-bit otherwise); `nil` when the boxes are not there or too short to say.
    static func itemCount(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard let iinf = metaChild("iinf", in: bytes), iinf.payload.count >= 6 else { return nil }
        let start = iinf.payload.lowerBound
        if bytes[start] == 0 { return Int(bytes[start + 4]) << 8 | Int(bytes[start + 5]) }
        guard iinf.payload.count >= 8 else { return nil }
        return Int(be32(bytes, start + 4))
    }

    /// Whether the `meta`/`iref` box's item references (of any type: derived images, thumbnails,
    /// auxiliary images) form a cycle, an item reaching itself. libheif 1.15 follows derived-image
    /// references recursively with no guard, so a grid that names itself as one of its tiles recurses
    /// until the stack overflows (a 731-byte file crashed the process); such a file is refused first.
    /// References are read as far as their box goes; a file without `iref` has none.
    static func hasReferenceCycle(in bytes: UnsafeRawBufferPointer) -> Bool {
        var edges: [UInt32: [UInt32]] = [:]
        for (from, to) in references(in: bytes) { edges[from, default: []].append(to) }
        // Depth-first search without recursion: 1 = on the current path, 2 = finished.
        var state: [UInt32: UInt8] = [:]
        for start in edges.keys where state[start] == nil {
            var stack: [(item: UInt32, next: Int)] = [(start, 0)]
            state[start] = 1
            while let top = stack.last {
                let targets = edges[top.item] ?? []
                guard top.next < targets.count else {
                    state[top.item] = 2
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let target = targets[top.next]
                switch state[target] {
                case 1: return true
                case 2: continue
                default:
                    state[target] = 1
                    stack.append((target, 0))
                }
            }
        }
        return false
    }

    /// Every (from, to) item pair of the `meta`/`iref` box: a full box whose children are
    /// single-type reference boxes, each a from-item ID, a 16-bit count and the to-item IDs (16-bit
    /// IDs for `iref` version 0, 32-bit otherwise).
    static func references(in bytes: UnsafeRawBufferPointer) -> [(from: UInt32, to: UInt32)] {
        guard let iref = metaChild("iref", in: bytes), iref.payload.count >= 4 else { return [] }
        let wide = bytes[iref.payload.lowerBound] != 0
        let idBytes = wide ? 4 : 2
        func id(_ offset: Int) -> UInt32 {
            wide ? be32(bytes, offset) : UInt32(bytes[offset]) << 8 | UInt32(bytes[offset + 1])
        }
        var pairs: [(from: UInt32, to: UInt32)] = []
        for reference in boxes(in: bytes, range: iref.payload.lowerBound + 4..<iref.payload.upperBound).boxes {
            let payload = reference.payload
            guard payload.count >= idBytes + 2 else { continue }
            let from = id(payload.lowerBound)
            let countOffset = payload.lowerBound + idBytes
            let count = Int(bytes[countOffset]) << 8 | Int(bytes[countOffset + 1])
            var offset = countOffset + 2
            for _ in 0..<count {
                guard offset + idBytes <= payload.upperBound else { break }
                pairs.append((from, id(offset)))
                offset += idBytes
            }
        }
        return pairs
    }

    /// The first box of `type` inside the top-level `meta` box, `nil` when either is missing. `meta` is
    /// a full box: 4 bytes of version and flags come before its children.
    private static func metaChild(_ type: String, in bytes: UnsafeRawBufferPointer) -> Box? {
        guard let meta = boxes(in: bytes, range: 0..<bytes.count).boxes.first(where: { $0.type == "meta" }),
              meta.payload.count >= 4 else { return nil }
        return boxes(in: bytes, range: meta.payload.lowerBound + 4..<meta.payload.upperBound).boxes.first { $0.type == type }
    }

    /// Whether the data ends inside a top-level box (a download cut short): a box header or a
    /// declared size that goes past the last byte.
    static func isTruncated(_ bytes: UnsafeRawBufferPointer) -> Bool {
        boxes(in: bytes, range: 0..<bytes.count).cutOff
    }

    private static func be32(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
    }
}
