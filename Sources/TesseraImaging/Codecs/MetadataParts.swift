/// EXIF's TIFF structure: a byte-order mark (`II` little-endian, `MM` big-endian), 42, the offset of IFD0;
/// an IFD is a 2-byte entry count, 12-byte entries (tag, type, count, value or its offset) and the offset of
/// the next IFD. Every read is bounds-checked; a malformed structure is left as it is or left out.
enum TIFFMetadata {
    /// A bounds-checked reader of one structure (its bytes indexed from 0: an array or a raw buffer).
    struct Reader<Bytes: RandomAccessCollection> where Bytes.Element == UInt8, Bytes.Index == Int {
        let bytes: Bytes
        /// `true` for `II`, `false` for `MM`.
        let littleEndian: Bool

        /// A reader of `bytes`, when they start with a byte-order mark and 42 in that order.
        init?(_ bytes: Bytes) {
            guard bytes.count >= 8 else { return nil }
            switch (bytes[0], bytes[1], bytes[2], bytes[3]) {
            case (0x49, 0x49, 42, 0): littleEndian = true
            case (0x4D, 0x4D, 0, 42): littleEndian = false
            default: return nil
            }
            self.bytes = bytes
        }

        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            let a = Int(bytes[at]), b = Int(bytes[at + 1])
            return littleEndian ? a | b << 8 : a << 8 | b
        }

        func u32(_ at: Int) -> Int? {
            guard let first = u16(at), let second = u16(at + 2) else { return nil }
            return littleEndian ? second << 16 | first : first << 16 | second
        }

        /// The offsets of IFD0's entries that lie within the bytes (the entries follow each other, so those are
        /// the first ones).
        func ifd0Entries() -> [Int] {
            guard let ifd = u32(4), let count = u16(ifd) else { return [] }
            let fitting = max(0, min(count, (bytes.count - ifd - 2) / 12))
            return (0..<fitting).map { ifd + 2 + 12 * $0 }
        }
    }

    /// `tiff` with IFD0's orientation (tag `0x0112`, a SHORT) set to 1; unchanged without one.
    static func withOrientationReset(_ tiff: [UInt8]) -> [UInt8] {
        guard let reader = Reader(tiff) else { return tiff }
        let littleEndian = reader.littleEndian
        var result = tiff
        for entry in reader.ifd0Entries() where reader.u16(entry) == 0x0112 && reader.u16(entry + 2) == 3 {
            result[entry + 8] = littleEndian ? 1 : 0
            result[entry + 9] = littleEndian ? 0 : 1
        }
        return result
    }

    /// A new little-endian structure holding only IFD0's `Artist` (`0x013B`) and `Copyright` (`0x8298`)
    /// ASCII entries of `tiff`, or `nil` when it has neither. Layout: the 8-byte header, IFD0 at offset 8
    /// (2 + 12 × n bytes, then a zero next-IFD offset), then each value longer than 4 bytes, at an even offset.
    static func copyrightOnly(_ tiff: [UInt8]) -> [UInt8]? {
        guard let reader = Reader(tiff) else { return nil }
        var kept: [(tag: Int, value: [UInt8])] = []
        for entry in reader.ifd0Entries() {
            guard let tag = reader.u16(entry), tag == 0x013B || tag == 0x8298, reader.u16(entry + 2) == 2,
                  let count = reader.u32(entry + 4), count > 0, count <= ImageMetadata.maximumPartBytes else { continue }
            let start = count <= 4 ? entry + 8 : (reader.u32(entry + 8) ?? tiff.count)
            guard start + count <= tiff.count else { continue }
            kept.append((tag, Array(tiff[start..<(start + count)])))
        }
        guard !kept.isEmpty else { return nil }
        kept.sort { $0.tag < $1.tag }
        var out: [UInt8] = [0x49, 0x49, 42, 0]
        func put16(_ value: Int) { out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func put32(_ value: Int) { put16(value & 0xFFFF); put16(value >> 16 & 0xFFFF) }
        put32(8)
        put16(kept.count)
        var valueOffset = 8 + 2 + 12 * kept.count + 4
        var values: [UInt8] = []
        for (tag, value) in kept {
            put16(tag); put16(2); put32(value.count)
            if value.count <= 4 {
                out += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                put32(valueOffset)
                values += value
                if value.count & 1 == 1 { values.append(0) }
                valueOffset += (value.count + 1) & ~1
            }
        }
        put32(0)
        return out + values
    }
}

/// IPTC-IIM datasets: each is `1C`, the record, the dataset number, a 2-byte big-endian length and the value
/// (an extended length, its top bit set, ends the walk).
enum IPTCDatasets {
    /// The datasets ``ImageMetadata/keepingCopyright()`` keeps: coded character set (1:90), record
    /// version (2:0), by-line (2:80) and copyright notice (2:116).
    private static let copyright: Set<[UInt8]> = [[1, 90], [2, 0], [2, 80], [2, 116]]

    /// Those datasets of `iptc`, or `nil` when it has no by-line and no copyright notice.
    static func copyrightOnly(_ iptc: [UInt8]) -> [UInt8]? {
        var out: [UInt8] = []
        var hasRights = false
        var i = 0
        while i + 5 <= iptc.count, iptc[i] == 0x1C, iptc[i + 3] & 0x80 == 0 {
            let length = Int(iptc[i + 3]) << 8 | Int(iptc[i + 4])
            guard i + 5 + length <= iptc.count else { break }
            let key = [iptc[i + 1], iptc[i + 2]]
            if copyright.contains(key) {
                out += iptc[i..<(i + 5 + length)]
                hasRights = hasRights || key == [2, 80] || key == [2, 116]
            }
            i += 5 + length
        }
        return hasRights ? out : nil
    }
}

/// An XMP packet as text: the few edits ``ImageMetadata`` makes, done on the serialised RDF (XMP writers
/// use the conventional prefixes `tiff:`, `dc:`, `xmpRights:`, `cc:` and `plus:`; a packet using other
/// prefixes keeps its orientation, and yields no rights).
enum XMPPacket {
    /// The properties ``rightsOnly(_:)`` keeps.
    static let rights = ["dc:creator", "dc:rights", "xmpRights:Marked", "xmpRights:Owner", "xmpRights:UsageTerms",
                         "xmpRights:WebStatement", "xmpRights:Certificate", "cc:license", "cc:attributionName", "plus:Licensor"]

    /// `packet` with `tiff:Orientation` set to 1, as an attribute (`tiff:Orientation="6"`) or an element.
    static func withOrientationReset(_ packet: [UInt8]) -> [UInt8] {
        let text = String(decoding: packet, as: UTF8.self)
        guard text.contains("tiff:Orientation") else { return packet }
        let reset = text.replacing(/tiff:Orientation\s*=\s*(["'])\d+(["'])/) { "tiff:Orientation=\($0.output.1)1\($0.output.2)" }
            .replacing(/<tiff:Orientation>\s*\d+\s*<\/tiff:Orientation>/) { _ in "<tiff:Orientation>1</tiff:Orientation>" }
        return Array(reset.utf8)
    }

    /// A new packet holding only the ``rights`` properties of `packet` (elements copied as written,
    /// attributes of a description written as elements), or `nil` when it has none.
    static func rightsOnly(_ packet: [UInt8]) -> [UInt8]? {
        let text = String(decoding: packet, as: UTF8.self)
        var properties: [String] = []
        for name in rights {
            properties += elements(named: name, in: text)
            for match in text.matches(of: try! Regex<(Substring, Substring, Substring)>("\\s\(name)\\s*=\\s*([\"'])(.*?)\\1")) {
                properties.append("<\(name)>\(match.output.2)</\(name)>")
            }
        }
        guard !properties.isEmpty else { return nil }
        let namespaces = #"xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmpRights="http://ns.adobe.com/xap/1.0/rights/" "#
            + #"xmlns:cc="http://creativecommons.org/ns#" xmlns:plus="http://ns.useplus.org/ldf/xmp/1.0/""#
        let packet = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" \(namespaces)>\(properties.joined())</rdf:Description></rdf:RDF></x:xmpmeta>\n"
            + "<?xpacket end=\"r\"?>"
        return Array(packet.utf8)
    }

    /// Every element `<name …>…</name>` or `<name …/>` of `text`, as written.
    private static func elements(named name: String, in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(name)") {
            let after = rest[open.upperBound...]
            guard let next = after.first, next == ">" || next == "/" || next.isWhitespace,
                  let tagEnd = after.firstIndex(of: ">") else { rest = after; continue }
            if after[..<tagEnd].hasSuffix("/") {
                found.append(String(rest[open.lowerBound...tagEnd]))
                rest = rest[after.index(after: tagEnd)...]
            } else if let close = after.range(of: "</\(name)>") {
                found.append(String(rest[open.lowerBound..<close.upperBound]))
                rest = rest[close.upperBound...]
            } else {
                break
            }
        }
        return found
    }
}
