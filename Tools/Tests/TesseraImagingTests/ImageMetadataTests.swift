import Foundation
import Testing
@testable @_spi(Internal) import TesseraImaging

/// A TIFF structure written by hand, in either byte order: IFD0 with `entries` (tag, type, count, value
/// bytes in the file's order), values over 4 bytes after the IFD.
private func tiff(littleEndian: Bool, _ entries: [(tag: Int, type: Int, count: Int, value: [UInt8])]) -> [UInt8] {
    func u16(_ v: Int) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { littleEndian ? u16(v & 0xFFFF) + u16(v >> 16) : u16(v >> 16) + u16(v & 0xFFFF) }
    var out = (littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]) + u16(42) + u32(8) + u16(entries.count)
    var extra: [UInt8] = []
    let valuesAt = 8 + 2 + 12 * entries.count + 4
    for entry in entries {
        out += u16(entry.tag) + u16(entry.type) + u32(entry.count)
        if entry.value.count <= 4 {
            out += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
        } else {
            out += u32(valuesAt + extra.count)
            extra += entry.value
        }
    }
    return out + u32(0) + extra
}

private func ascii(_ text: String) -> (count: Int, value: [UInt8]) { (text.utf8.count + 1, Array(text.utf8) + [0]) }

/// EXIF with a camera make, an artist, a copyright and orientation 6.
private func cameraEXIF(littleEndian: Bool) -> [UInt8] {
    let make = ascii("TestCam"), artist = ascii("Ada Lovelace"), copyright = ascii("(c)")
    let six: [UInt8] = littleEndian ? [6, 0] : [0, 6]
    return tiff(littleEndian: littleEndian, [(0x010F, 2, make.count, make.value), (0x0112, 3, 1, six),
                                             (0x013B, 2, artist.count, artist.value), (0x8298, 2, copyright.count, copyright.value)])
}

private let packet = Array("""
    <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
    <rdf:Description rdf:about="" tiff:Orientation="6" xmpRights:Marked="True" xmlns:tiff="http://ns.adobe.com/tiff/1.0/">
    <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">CC BY 4.0</rdf:li></rdf:Alt></dc:rights>
    <dc:subject><rdf:Bag><rdf:li>private</rdf:li></rdf:Bag></dc:subject>
    <cc:license rdf:resource="https://creativecommons.org/licenses/by/4.0/"/>
    </rdf:Description></rdf:RDF></x:xmpmeta>
    """.utf8)

/// IPTC: record version, keywords, by-line, copyright notice.
private let iptc: [UInt8] = [0x1C, 2, 0, 0, 2, 0, 4] + [0x1C, 2, 25, 0, 7] + Array("private".utf8)
    + [0x1C, 2, 80, 0, 3] + Array("Ada".utf8) + [0x1C, 2, 116, 0, 3] + Array("(c)".utf8)

@Suite("Image metadata: reading, what strip, copyright and keep keep, writing into every format")
struct ImageMetadataTests {
    let all = ImageMetadata(exif: cameraEXIF(littleEndian: true), xmp: packet, iptc: iptc)

    @Test("keep resets the orientation to 1 in EXIF of either byte order and in XMP, and keeps the rest", arguments: [true, false])
    func keepResetsOrientation(littleEndian: Bool) throws {
        let exif = cameraEXIF(littleEndian: littleEndian)
        #expect(exif.withUnsafeBytes { ExifOrientationReader.orientation(inTIFF: $0) } == .right)
        let kept = ImageMetadata(exif: exif, xmp: packet, iptc: iptc).kept(.keep)
        let reset = try #require(kept.exif)
        #expect(reset.count == exif.count)
        #expect(reset.withUnsafeBytes { ExifOrientationReader.orientation(inTIFF: $0) } == .up)
        #expect(zip(reset, exif).filter { $0 != $1 }.count == 1, "only the orientation's value byte changed")
        let xmp = String(decoding: try #require(kept.xmp), as: UTF8.self)
        #expect(xmp.contains(#"tiff:Orientation="1""#) && !xmp.contains(#"tiff:Orientation="6""#) && xmp.contains("private"))
        #expect(kept.iptc == iptc)
        #expect(ImageMetadata(exif: exif).kept(.strip).isEmpty)
    }

    @Test("copyright keeps the artist and copyright, the rights and licence, the by-line and notice, and nothing else")
    func copyrightKeepsRightsOnly() throws {
        let kept = all.kept(.copyright)
        let exif = try #require(kept.exif)
        // A new little-endian structure: header, 2 entries, next-IFD offset, "Ada Lovelace\0" (13 bytes, padded).
        #expect(exif.count == 8 + 2 + 24 + 4 + 14)
        #expect(String(decoding: exif, as: UTF8.self).contains("Ada Lovelace") && !String(decoding: exif, as: UTF8.self).contains("TestCam"))
        #expect(Array(exif[10..<12]) == [0x3B, 0x01] && Array(exif[22..<24]) == [0x98, 0x82], "Artist, then Copyright, by tag")
        #expect(Array(exif[30..<34]) == Array("(c)".utf8) + [0], "a 4-byte value stays in its entry")
        #expect(exif.withUnsafeBytes { ExifOrientationReader.orientation(inTIFF: $0) } == .up, "no orientation tag")
        let xmp = String(decoding: try #require(kept.xmp), as: UTF8.self)
        #expect(xmp.contains("<dc:rights><rdf:Alt><rdf:li xml:lang=\"x-default\">CC BY 4.0</rdf:li></rdf:Alt></dc:rights>"))
        #expect(xmp.contains("<xmpRights:Marked>True</xmpRights:Marked>") && xmp.contains("<cc:license rdf:resource="))
        #expect(!xmp.contains("private") && !xmp.contains("Orientation"))
        #expect(kept.iptc == [0x1C, 2, 0, 0, 2, 0, 4] + [0x1C, 2, 80, 0, 3] + Array("Ada".utf8) + [0x1C, 2, 116, 0, 3] + Array("(c)".utf8))
        let nothing = ImageMetadata(exif: tiff(littleEndian: true, [(0x010F, 2, 4, Array("Cam\0".utf8))]),
                                    xmp: Array("<x:xmpmeta/>".utf8), iptc: [0x1C, 2, 25, 0, 1, 0x41]).kept(.copyright)
        #expect(nothing.isEmpty, "parts without rights are left out")
    }

    @Test("written into JPEG, PNG and WebP (lossy, lossless with alpha) and read back; the files still decode", arguments: [
        ImageEncoder(format: .jpeg), ImageEncoder(format: .png), ImageEncoder(format: .webp), ImageEncoder(format: .webp, lossless: true),
    ])
    func roundTrip(encoder: ImageEncoder) throws {
        var image = try quadrants(width: 40, height: 30)
        if encoder.lossless {
            image = Bitmap(width: 40, height: 30, style: .bgra32) { view in
                for y in 0..<30 { for x in 0..<40 { (view.row(y) + x * 4).storeBytes(of: x < 20 ? 0x8000_0080 : 0xFF00_FF00, as: UInt32.self) } }
            }
        }
        // Orientation 1, so that the decoder leaves the pixels as they are.
        let upright = all.keepingAll()
        var writer = encoder
        writer.metadata = upright
        let plain = try encoder.encode(image), file = try writer.encode(image)
        let read = ImageMetadata(reading: Data(file))
        #expect(read.exif == upright.exif && read.xmp == upright.xmp)
        #expect(read.iptc == (encoder.format == .jpeg ? iptc : nil), "IPTC has a place in JPEG only")
        #expect(ImageMetadata(reading: Data(plain)).isEmpty)
        let decoded = try ImageDecoder().decode(Data(file))
        #expect(decoded.width == 40 && decoded.height == 30)
        #expect(decoded.pixel(x: 5, y: 5) == (try ImageDecoder().decode(Data(plain))).pixel(x: 5, y: 5), "the same pixels as without metadata")
        if encoder.format == .webp {
            #expect(Array(file[12..<16]) == Array("VP8X".utf8))
            #expect(file[20] & 0x0C == 0x0C, "the EXIF and XMP flags")
            #expect(file[20] & 0x10 == (encoder.lossless ? 0x10 : 0), "the alpha flag as the image has alpha")
            #expect(Int(file[4]) | Int(file[5]) << 8 | Int(file[6]) << 16 | Int(file[7]) << 24 == file.count - 8, "the RIFF size")
        }
    }

    @Test("a part over one JPEG segment is left out of a JPEG, kept in a PNG; unknown bytes read as nothing")
    func bounds() throws {
        let image = try quadrants(width: 8, height: 8)
        let big = ImageMetadata(exif: cameraEXIF(littleEndian: true), xmp: Array(repeating: 0x20, count: 70_000))
        let jpeg = try ImageEncoder(format: .jpeg, metadata: big).encode(image)
        #expect(ImageMetadata(reading: Data(jpeg)) == ImageMetadata(exif: big.exif))
        let png = try ImageEncoder(format: .png, metadata: big).encode(image)
        #expect(ImageMetadata(reading: Data(png)) == big)
        #expect(ImageMetadata(reading: Data([0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0x45])).isEmpty, "a cut segment")
        #expect(ImageMetadata(reading: Data("GIF89a".utf8)).isEmpty)
    }

    @Test("metadata is part of the identity only when it is not strip, and a recipe field")
    func identity() throws {
        var processing = ImageProcessing(width: 10)
        let plain = processing.identity
        processing.metadata = .copyright
        #expect(processing.identity == plain + ",meta=copyright")
        let recipe = try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"width": 10, "metadata": "keep"}"#.utf8))
        #expect(recipe.metadata == .keep)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ImageProcessing.self, from: Data(#"{"metadata": "all"}"#.utf8)) }
    }
}
