/// Reads the few JPEG header facts TurboJPEG does not report: the EXIF orientation (tag 0x0112 of
/// IFD0 in the APP1 "Exif" segment), where the EXIF, XMP and Photoshop (IPTC) segments are, whether an Adobe APP14 segment is present (which tells
/// how CMYK values are stored) and where the APP2 "ICC_PROFILE" segments are (assembled by
/// ``EmbeddedProfile/jpeg(_:segments:)``).
///
/// Every read is bounds-checked; malformed or missing EXIF yields ``ImageOrientation/up``, never a
/// crash or an error. Only the markers before the first scan (SOS) are walked.
enum ExifOrientationReader {
    /// What the marker walk found.
    struct Findings: Equatable {
        /// The EXIF orientation, ``ImageOrientation/up`` when absent or malformed.
        var orientation: ImageOrientation = .up
        /// Whether an APP14 "Adobe" segment was seen.
        var hasAdobeMarker = false
        /// Whether the data ended before the walk reached SOS or EOI (the headers are cut off).
        var endedEarly = false
        /// Whether the walk reached a start-of-scan marker.
        var reachedScan = false
        /// The offset of the first start-of-scan marker (`FF DA`), when the walk reached one.
        var scanOffset: Int?
        /// The payloads of the APP2 segments that start with "ICC_PROFILE\0", in file order.
        var iccSegments: [Range<Int>] = []
        /// The TIFF structure of the first APP1 "Exif\0\0" segment (after those six bytes).
        var exif: Range<Int>?
        /// The packet of the first APP1 XMP segment (after its namespace and zero byte).
        var xmp: Range<Int>?
        /// The payload of the first APP13 "Photoshop 3.0\0" segment (after that signature).
        var photoshop: Range<Int>?
    }

    /// Whether a JPEG was cut short: its headers end before the first scan, or it has a scan but no
    /// EOI (`FF D9`, which cannot occur inside entropy-coded data) after the first scan's header.
    /// Bytes after the EOI (padding, appended data) do not count. Cheap: a file that ends with EOI is
    /// answered from its last two bytes; otherwise the bytes after the first scan are searched
    /// backwards for an EOI.
    static func looksTruncated(jpeg data: UnsafeRawBufferPointer) -> Bool {
        looksTruncated(jpeg: data, findings: scan(jpeg: data))
    }

    /// ``looksTruncated(jpeg:)`` with the marker walk `findings` of `data` already made.
    static func looksTruncated(jpeg data: UnsafeRawBufferPointer, findings: Findings) -> Bool {
        if findings.endedEarly { return true }
        guard findings.reachedScan, let start = findings.scanOffset, let base = data.baseAddress else { return false }
        let n = data.count
        if n >= 2 && data[n - 2] == 0xFF && data[n - 1] == 0xD9 { return false }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var i = n - 1
        while i > start + 1 {
            if bytes[i] == 0xD9 && bytes[i - 1] == 0xFF { return false }
            i -= 1
        }
        return true
    }

    /// The EXIF orientation of a JPEG file.
    static func orientation(inJPEG data: UnsafeRawBufferPointer) -> ImageOrientation {
        scan(jpeg: data).orientation
    }

    /// Walks the JPEG markers from SOI up to SOS/EOI or the first malformed segment.
    static func scan(jpeg data: UnsafeRawBufferPointer) -> Findings {
        var findings = Findings()
        let count = data.count
        guard count >= 4, data[0] == 0xFF, data[1] == 0xD8 else { return findings }
        var foundExif = false
        var i = 2
        findings.endedEarly = true   // until SOS, EOI or malformed structure is seen
        while i < count {
            if data[i] != 0xFF || (i + 1 < count && data[i + 1] == 0x00) {
                // Junk between segments: skipped up to the next marker, as libjpeg does (it warns about
                // extraneous bytes). With no marker after it, the structure is malformed, not cut.
                guard let next = nextMarker(in: data, from: i) else { findings.endedEarly = false; break }
                i = next
            }
            while i < count && data[i] == 0xFF { i += 1 }   // fill bytes
            guard i < count else { break }
            let marker = data[i]
            i += 1
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }   // no length
            if marker == 0xD9 || marker == 0xDA {   // EOI, start of scan
                findings.endedEarly = false
                findings.reachedScan = marker == 0xDA
                if marker == 0xDA { findings.scanOffset = i - 2 }
                break
            }
            guard i + 2 <= count else { break }
            let length = Int(data[i]) << 8 | Int(data[i + 1])
            guard length >= 2 else { findings.endedEarly = false; break }
            guard i + length <= count else { break }
            let segment = UnsafeRawBufferPointer(rebasing: data[(i + 2)..<(i + length)])
            if marker == 0xE1, !foundExif, starts(segment, with: exifSignature) {
                foundExif = true
                findings.orientation = orientation(inTIFF: UnsafeRawBufferPointer(rebasing: segment[6...]))
                findings.exif = (i + 8)..<(i + length)
            } else if marker == 0xE1, findings.xmp == nil, starts(segment, with: xmpSignature) {
                findings.xmp = (i + 2 + xmpSignature.count)..<(i + length)
            } else if marker == 0xED, findings.photoshop == nil, starts(segment, with: photoshopSignature) {
                findings.photoshop = (i + 2 + photoshopSignature.count)..<(i + length)
            } else if marker == 0xEE, starts(segment, with: [0x41, 0x64, 0x6F, 0x62, 0x65]) {   // "Adobe"
                findings.hasAdobeMarker = true
            } else if marker == 0xE2, starts(segment, with: EmbeddedProfile.jpegSignature) {
                findings.iccSegments.append((i + 2)..<(i + length))
            }
            i += length
        }
        return findings
    }

    /// The offset of the first `FF` at or after `start` that begins a marker (followed by neither
    /// `00` nor `FF`, fill bytes before it skipped), if any.
    static func nextMarker(in data: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var i = start
        while i + 1 < data.count {
            if data[i] == 0xFF {
                var j = i + 1
                while j < data.count && data[j] == 0xFF { j += 1 }
                if j < data.count && data[j] != 0x00 { return j - 1 }
                i = j + 1
                continue
            }
            i += 1
        }
        return nil
    }

    /// The orientation tag of IFD0 in a TIFF structure (the EXIF payload after "Exif\0\0").
    static func orientation(inTIFF tiff: UnsafeRawBufferPointer) -> ImageOrientation {
        guard let reader = TIFFMetadata.Reader(tiff) else { return .up }
        guard let entry = reader.ifd0Entries().first(where: { reader.u16($0) == 0x0112 }) else { return .up }
        let value: Int?
        switch reader.u16(entry + 2) {
        case 3: value = reader.u16(entry + 8)            // SHORT, the specified type
        case 4: value = reader.u32(entry + 8)            // LONG, seen in some writers
        case 1, 7: value = Int(tiff[entry + 8])          // BYTE / UNDEFINED, ditto
        default: value = nil
        }
        return value.flatMap { ImageOrientation(rawValue: $0) } ?? .up
    }

    /// The start of an APP1 EXIF segment: `Exif` and two zero bytes, then the TIFF structure.
    static let exifSignature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
    /// The start of an APP1 XMP segment: the XMP namespace and a zero byte.
    static let xmpSignature: [UInt8] = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
    /// The start of an APP13 segment of Photoshop image resources (where IPTC-IIM lives).
    static let photoshopSignature: [UInt8] = Array("Photoshop 3.0".utf8) + [0]

    static func starts(_ bytes: UnsafeRawBufferPointer, with prefix: [UInt8]) -> Bool {
        guard bytes.count >= prefix.count else { return false }
        for (k, byte) in prefix.enumerated() where bytes[k] != byte { return false }
        return true
    }
}
