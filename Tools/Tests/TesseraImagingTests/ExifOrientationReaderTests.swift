import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("EXIF orientation")
struct ExifOrientationReaderTests {
    typealias S = CodecTestSupport

    /// A TIFF structure with IFD0 holding a Make tag and then the orientation tag.
    static func tiff(orientation: Int, bigEndian: Bool, type: Int = 3, ifdOffset: Int = 8, entryCount: Int = 2) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        var t: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        t += u16(42) + u32(ifdOffset) + u16(entryCount)
        t += u16(0x010F) + u16(2) + u32(4) + [0x61, 0x62, 0x63, 0]   // Make = "abc"
        t += u16(0x0112) + u16(type) + u32(1) + (type == 4 ? u32(orientation) : u16(orientation) + [0, 0])
        t += u32(0)   // no next IFD
        return t
    }

    /// `jpeg` with an APP1 Exif segment holding `tiff` inserted right after SOI.
    static func splice(_ tiff: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return Array(jpeg[0..<2]) + [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + Array(jpeg[2...])
    }

    static func jpeg() throws -> [UInt8] {
        try JPEGEncoder().encode(try S.bitmap(width: 24, height: 16, style: .bgr32, color: S.gradient))
    }

    @Test("all eight orientations, both byte orders", arguments: ImageOrientation.allCases, [false, true])
    func orientations(orientation: ImageOrientation, bigEndian: Bool) throws {
        let file = Self.splice(Self.tiff(orientation: orientation.rawValue, bigEndian: bigEndian), into: try Self.jpeg())
        let (info, bitmap) = try S.decode(file, with: JPEGDecoder())
        #expect(info.orientation == orientation)
        #expect(info.storedSize == PixelSize(width: 24, height: 16))
        #expect(info.displaySize == (orientation.swapsAxes ? PixelSize(width: 16, height: 24) : PixelSize(width: 24, height: 16)))
        #expect(bitmap.layout.size == info.storedSize)
    }

    @Test("a LONG orientation value is accepted too")
    func longType() throws {
        let file = Self.splice(Self.tiff(orientation: 6, bigEndian: true, type: 4), into: try Self.jpeg())
        #expect(file.withUnsafeBytes { ExifOrientationReader.orientation(inJPEG: $0) } == .right)
    }

    @Test("no EXIF means up")
    func none() throws {
        #expect(try Self.jpeg().withUnsafeBytes { ExifOrientationReader.orientation(inJPEG: $0) } == .up)
    }

    @Test("malformed EXIF is .up and the image still decodes")
    func malformed() throws {
        let jpeg = try Self.jpeg()
        let good = Self.tiff(orientation: 8, bigEndian: false)
        var badOrder = good; badOrder[0] = 0x58; badOrder[1] = 0x58
        var badMagic = good; badMagic[2] = 43
        let variants: [[UInt8]] = [
            Self.tiff(orientation: 9, bigEndian: false),
            Self.tiff(orientation: 0, bigEndian: true),
            Self.tiff(orientation: 6, bigEndian: false, type: 5),
            Self.tiff(orientation: 6, bigEndian: false, ifdOffset: 0x7FFF_FFF0),
            Self.tiff(orientation: 6, bigEndian: true, ifdOffset: 6000),
            Self.tiff(orientation: 6, bigEndian: false, entryCount: 0xFFFF),
            Array(good.prefix(20)), Array(good.prefix(7)), [], badOrder, badMagic,
        ]
        for (k, tiff) in variants.enumerated() {
            let file = Self.splice(tiff, into: jpeg)
            let expected: ImageOrientation = k == 5 ? .right : .up  // entry count too big: the tag is still found first
            #expect(file.withUnsafeBytes { ExifOrientationReader.orientation(inJPEG: $0) } == expected, "variant \(k)")
            #expect(try S.decode(file, with: JPEGDecoder()).bitmap.width == 24)
        }
        // A segment length running past the end of the data.
        let cut = Array(Self.splice(good, into: jpeg).prefix(30))
        #expect(cut.withUnsafeBytes { ExifOrientationReader.orientation(inJPEG: $0) } == .up)
        #expect(cut.withUnsafeBytes { ExifOrientationReader.orientation(inTIFF: $0) } == .up)
    }

    @Test("every prefix and many corruptions of an EXIF JPEG are read without crashing")
    func fuzz() throws {
        let file = Self.splice(Self.tiff(orientation: 3, bigEndian: true), into: try Self.jpeg())
        var seen = Set<ImageOrientation>()
        for length in 0...min(file.count, 120) {
            seen.insert(Array(file.prefix(length)).withUnsafeBytes { ExifOrientationReader.orientation(inJPEG: $0) })
        }
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            var copy = file
            copy[Int.random(in: 2..<60, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            seen.insert(copy.withUnsafeBytes { ExifOrientationReader.orientation(inJPEG: $0) })
        }
        #expect(seen.contains(.down) && seen.contains(.up))
    }

    @Test("looksTruncated: cut headers and scans without EOI are truncated; bytes after EOI, junk between segments and FF D9 in an APP segment are not")
    func looksTruncated() throws {
        let file = try Self.jpeg()
        func truncated(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { ExifOrientationReader.looksTruncated(jpeg: $0) } }
        #expect(!truncated(file))
        #expect(truncated(Array(file.dropLast(2))))
        #expect(truncated(Array(file.prefix(file.count * 2 / 3))))
        #expect(truncated(Array(file.prefix(40))), "inside the headers")
        #expect(!truncated(file + [0, 0, 0, 0x55]), "padding after EOI")
        #expect(!truncated(file + Array(file)), "another JPEG appended")
        // An EOI inside an APP segment before the scan does not end the file.
        let app: [UInt8] = [0xFF, 0xE5, 0x00, 0x06, 0xFF, 0xD9, 0xFF, 0xD9]
        let withApp = Array(file[0..<2]) + app + Array(file[2...])
        #expect(!truncated(withApp))
        #expect(truncated(Array(withApp.dropLast(2))))
        // Junk between segments is skipped as libjpeg skips it: the scan is still found.
        let junk = Array(file[0..<2]) + [0x00, 0x12, 0xFF, 0x00] + Array(file[2...])
        let findings = junk.withUnsafeBytes { ExifOrientationReader.scan(jpeg: $0) }
        #expect(findings.reachedScan && !findings.endedEarly)
        #expect(!truncated(junk))
        #expect(truncated(Array(junk.dropLast(2))))
        // Junk with no marker after it is malformed, not cut.
        #expect(!truncated([0xFF, 0xD8, 0x01, 0x02, 0x03, 0x04, 0x05]))
    }

    @Test("probe: integrity truncated exactly when no EOI follows the scans")
    func probeIntegrity() throws {
        let file = Self.splice(Self.tiff(orientation: 6, bigEndian: true), into: try Self.jpeg())
        let info = try file.withUnsafeBytes { try JPEGDecoder().probe($0) }
        #expect(info.integrity == .intact)
        #expect(info.orientation == .right)
        let cut = Array(file.dropLast(10))
        let cutInfo = try cut.withUnsafeBytes { try JPEGDecoder().probe($0) }
        #expect(cutInfo.integrity == .truncated)
        #expect(cutInfo.orientation == .right)
    }
}
