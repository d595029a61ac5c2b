import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
import TesseraTestSupport

/// HEIC and AVIF decoding (libheif) on files `heif-enc` makes from a real photograph at test time:
/// sniffing, probe, thumbnail items, orientation, pixels against the source (PSNR).
@Suite("HEIC and AVIF decoding")
struct HEIFDecoderTests {
    typealias H = HEIFTestSupport
    typealias S = CodecTestSupport

    /// An `ftyp` box: size, "ftyp", major brand, minor version 0, compatible brands.
    static func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
        let body = Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
        return H.be32Bytes(UInt32(8 + body.count)) + Array("ftyp".utf8) + body + [0, 0, 0, 8] + Array("free".utf8)
    }

    @Test("ftyp brands decide HEIC or AVIF", arguments: [
        ("heic", ["mif1", "heic"], ImageFileFormat?.some(.heic)), ("heix", [], .heic), ("hevc", [], .heic),
        ("mif1", ["mif1", "heic"], .heic), ("msf1", ["msf1"], .heic), ("mif1", ["mif1", "avif", "miaf"], .avif),
        ("avif", ["mif1", "avif"], .avif), ("avis", ["msf1", "avis"], .avif), ("isom", ["isom", "mp41"], nil), ("qt  ", [], nil),
    ])
    func sniffing(major: String, compatible: [String], expected: ImageFileFormat?) {
        #expect(Self.ftyp(major, compatible).withUnsafeBytes { ImageFileFormat(sniffing: $0) } == expected)
    }

    @Test("a photograph as HEIC and AVIF: probe without pixels, full decode and thumbnail close to the source", arguments: [ImageFileFormat.heic, .avif])
    func photo(format: ImageFileFormat) throws {
        let directory = try H.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try H.photo(width: 480)
        let file = try H.encode(source, as: format, quality: 90, in: directory)
        let info = try ImageDecoder().probe(Data(file))
        #expect(info == ImageInfo(format: format, width: source.width, height: source.height, hasAlpha: false))
        let full = try ImageDecoder().decode(Data(file))
        #expect(full.layout.size == source.layout.size)
        let fullPSNR = psnr(full, source)
        #expect(fullPSNR >= 32, "full decode PSNR \(fullPSNR) dB")
        // The thumbnail path (full decode, box filter) against the same thumbnail of the PNG source.
        let target = PixelSize(width: 120, height: 75)
        let thumbnail = try ImageDecoder().thumbnail(Data(file), size: target)
        let reference = try ImageDecoder().thumbnail(Data(try PNGEncoder().encode(source)), size: target)
        let thumbnailPSNR = psnr(thumbnail, reference)
        #expect(thumbnailPSNR >= 35, "thumbnail PSNR \(thumbnailPSNR) dB")
    }

    @Test("a thumbnail item that covers the target is decoded instead of the image", arguments: [ImageFileFormat.heic, .avif])
    func thumbnailItem(format: ImageFileFormat) throws {
        let directory = try H.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try H.photo(width: 480)   // 480×300
        let file = try H.encode(source, as: format, quality: 90, extra: ["-t", "160"], in: directory)
        let decoder = HEIFDecoder(format: format)
        let info = try file.withUnsafeBytes { try decoder.probe($0) }
        #expect(info.thumbnailSizes == [PixelSize(width: 160, height: 100)])
        #expect(decoder.decodedSize(for: info, atLeast: PixelSize(width: 120, height: 75)) == PixelSize(width: 160, height: 100))
        #expect(decoder.decodedSize(for: info, atLeast: PixelSize(width: 161, height: 75)) == info.storedSize)
        #expect(decoder.decodedSize(for: info, atLeast: nil) == info.storedSize)
        // The thumbnail decodes into a target of its size; the façade's thumbnail goes through it.
        let small = try S.decode(file, with: decoder, atLeast: PixelSize(width: 120, height: 75)).bitmap
        #expect(small.layout.size == PixelSize(width: 160, height: 100))
        let reference = try ImageDecoder().thumbnail(Data(try PNGEncoder().encode(source)), size: small.layout.size)
        // heif-enc scales its thumbnail with its own filter, not our box filter: 29.2–29.3 dB here.
        let psnr = psnr(small, reference)
        #expect(psnr >= 27, "thumbnail item PSNR \(psnr) dB")
        let viaFacade = try ImageDecoder().thumbnail(Data(file), size: PixelSize(width: 120, height: 75))
        #expect(viaFacade.layout.size == PixelSize(width: 120, height: 75))
    }

    @Test("an EXIF orientation inside a HEIC is not applied: libheif's irot/imir are the only turn")
    func exifOrientationIgnored() throws {
        let directory = try H.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = try H.photo(width: 96)   // 96×60, landscape
        let jpeg = ExifOrientationReaderTests.splice(ExifOrientationReaderTests.tiff(orientation: 6, bigEndian: false),
                                                     into: try JPEGEncoder(quality: 95).encode(source))
        #expect(try ImageDecoder().probe(Data(jpeg)).orientation == .right)   // the JPEG itself is turned
        let input = directory.appendingPathComponent("turned.jpg")
        try Data(jpeg).write(to: input)
        // heif-enc 1.15 keeps the EXIF block (orientation 6) and writes no irot.
        let heic = try H.heifEnc(["-q", "90", input.path], output: directory.appendingPathComponent("turned.heic"))
        let info = try ImageDecoder().probe(Data(heic))
        #expect(info.orientation == .up)
        #expect(info.displaySize == source.layout.size)
        let decoded = try ImageDecoder().decode(Data(heic))
        // JPEG q95 then HEVC q90 of a 96×60 image: 29.2 dB here; a turned decode would not even have this size.
        let psnr = psnr(decoded, source)
        #expect(psnr >= 27, "PSNR \(psnr) dB against the unturned source")
    }

    @Test("opaque styles: bgr32 is the BGRA decode composited over black")
    func bgr32() throws {
        let bytes = try S.fixture("alpha.avif")
        let bgra = try S.decode(bytes, with: HEIFDecoder(format: .avif)).bitmap
        let bgr = try S.decode(bytes, with: HEIFDecoder(format: .avif), style: .bgr32).bitmap
        for (x, y) in CodecFixtureTests.centres {
            #expect(Array(bgr.pixel(x: x, y: y).prefix(3)) == Array(bgra.pixel(x: x, y: y).prefix(3)))
            #expect(bgr.pixel(x: x, y: y)[3] == 255)
        }
    }

    @Test("each HEIF decoder reads its own brand only")
    func foreignBrand() throws {
        let heic = try S.fixture("lossy.heic")
        let reason = S.failure { _ = try S.decode(heic, with: HEIFDecoder(format: .avif)) }
        guard case .decoding(.unsupportedFormat)? = reason else {
            Issue.record("AVIF decoder on a HEIC: \(String(describing: reason))")
            return
        }
    }
}

extension HEIFTestSupport {
    static func be32Bytes(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
}

/// `irot`/`imir` written by libheif (``AVIFEncoder/orientation``) and applied by it when decoding:
/// the decoder reports ``ImageOrientation/up`` and every displayed block comes from the stored block
/// the orientation names. Such files skip the libavif path (it leaves transformations to its caller).
@Suite("HEIF irot/imir")
struct HEIFTransformTests {
    @Test("irot/imir are applied once, by libheif", arguments: ImageOrientation.allCases)
    func transformApplied(_ orientation: ImageOrientation) throws {
        let stored = try ImageDecoderTests.bands()
        let file = try AVIFEncoder(quality: 90, speed: 9, orientation: orientation).encode(stored)
        let info = try ImageDecoder().probe(Data(file))
        #expect(info.orientation == .up)
        #expect(info.storedSize == orientation.displaySize(of: stored.layout.size))
        let decoded = try ImageDecoder().decode(Data(file))
        #expect(decoded.layout.size == orientation.displaySize(of: stored.layout.size))
        for y in stride(from: 8, to: decoded.height, by: 16) {
            for x in stride(from: 8, to: decoded.width, by: 16) {
                let s = orientation.storedPoint(x: x, y: y, stored: stored.layout.size)
                #expect(ImageDecoderTests.near(decoded.pixel(x: x, y: y), stored.pixel(x: s.x, y: s.y)), "\(orientation) (\(x),\(y)) ← \(s)")
            }
        }
    }
}
