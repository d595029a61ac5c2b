import ToolsTurboJPEG
import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraTestSupport

/// Builds the colour tests' inputs at run time: ICC profiles made with lcms2 (Display P3, sRGB, a
/// CMYK profile with known colours; ``ICCProfiles``) and JPEG, PNG and WebP files that embed them,
/// plus the expected sRGB values from the colour-space arithmetic itself (not from lcms2).
enum ColourTestSupport {
    // MARK: Profiles (built by lcms2 in TesseraTestSupport's ICCProfiles)

    static func displayP3Profile() throws -> [UInt8] { try ICCProfiles.displayP3() }
    static func sRGBProfile() throws -> [UInt8] { try ICCProfiles.sRGB() }
    static func cmykProfile() throws -> [UInt8] { try ICCProfiles.cmyk { cmykCorner(c: $0, m: $1, y: $2, k: $3) } }

    /// The sRGB colour of each CMYK corner of ``cmykProfile()``: white paper times the inks' colours
    /// as fractions, cyan (0, 160, 230), magenta (230, 0, 130), yellow (255, 235, 0); any corner with
    /// full black is black. Deliberately unlike the naive formula (where cyan is (0, 255, 255)), so
    /// that a decode that ignored the profile fails. White and black are the display's own: lcms2
    /// maps a profile's white to white (its white fix-up) and, with perceptual intent and a v4
    /// profile, its black point to the display's (black point compensation), so other paper or
    /// black colours would not come out as written in the table.
    static func cmykCorner(c: Bool, m: Bool, y: Bool, k: Bool) -> [Double] {
        if k { return [0, 0, 0] }
        var colour: [Double] = [255, 255, 255]
        let inks: [(Bool, [Double])] = [(c, [0, 160, 230]), (m, [230, 0, 130]), (y, [255, 235, 0])]
        for (on, ink) in inks where on { colour = zip(colour, ink).map { $0 * $1 / 255 } }
        return colour
    }

    // MARK: Expected values, from the colour-space definitions

    /// The sRGB value (0…255, unrounded) of Display P3 `rgb`, from the two spaces' definitions
    /// (``ICCProfiles/sRGB(fromDisplayP3:)``).
    static func sRGB(fromDisplayP3 rgb: [Double]) -> [Double] { ICCProfiles.sRGB(fromDisplayP3: rgb) }

    // MARK: Files

    /// A `width` × `height` bitmap of one opaque colour (BGRA order in `bgra`).
    static func flat(width: Int, height: Int, bgra: [UInt8]) -> Bitmap {
        Bitmap(width: width, height: height, style: .bgra32) { view in
            for y in 0..<height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width { for k in 0..<4 { row[x * 4 + k] = bgra[k] } }
            }
        }
    }

    /// `jpeg` with the profile in APP2 segments (``ICCProfiles/jpeg(_:embedding:chunks:order:declaredCount:)``).
    static func jpeg(_ jpeg: [UInt8], embedding profile: [UInt8], chunks: Int = 1, order: [Int]? = nil,
                     declaredCount: Int? = nil) -> [UInt8] {
        ICCProfiles.jpeg(jpeg, embedding: profile, chunks: chunks, order: order, declaredCount: declaredCount)
    }

    /// A CMYK JPEG (TurboJPEG writes YCCK with an Adobe segment, so the values are stored inverted:
    /// 255 is no ink) of `width` × `height` whose pixel (x, y) has the inks `inks(x, y)` (0…255 each).
    static func cmykJPEG(width: Int, height: Int, inks: (Int, Int) -> [UInt8]) throws -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width { for (k, ink) in inks(x, y).enumerated() { pixels[(y * width + x) * 4 + k] = 255 - ink } }
        }
        let handle = try #require(tjInitCompress())
        defer { tjDestroy(handle) }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        let result = tjCompress2(handle, pixels, Int32(width), Int32(width * 4), Int32(height), Int32(TJPF_CMYK.rawValue), &output, &size,
                                 Int32(TJSAMP_444.rawValue), 100, 0)
        defer { tjFree(output) }
        #expect(result == 0)
        let bytes = try #require(output)
        return Array(UnsafeBufferPointer(start: bytes, count: Int(size)))
    }

    /// A PNG chunk with its CRC.
    static func pngChunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return be32(body.count) + typed + be32(Int(crc32(typed)))
    }

    /// `png` with its own colour chunks removed (libpng's writer adds `sRGB`, which would override
    /// `gAMA`) and `chunks` inserted after IHDR.
    static func png(_ png: [UInt8], inserting chunks: [UInt8]) -> [UInt8] {
        var kept: [UInt8] = []
        var i = 33
        while i + 12 <= png.count {
            let length = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            let type = String(decoding: png[(i + 4)..<(i + 8)], as: UTF8.self)
            if !["sRGB", "gAMA", "cHRM", "iCCP"].contains(type) { kept += png[i..<(i + 12 + length)] }
            i += 12 + length
        }
        return Array(png[0..<33]) + chunks + kept
    }

    /// An `iCCP` chunk holding `profile` in a zlib stream of stored (uncompressed) blocks.
    static func iCCP(_ profile: [UInt8]) -> [UInt8] {
        var stream: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65535, profile.count - offset)
            let final: UInt8 = offset + n == profile.count ? 1 : 0
            stream += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            stream += profile[offset..<(offset + n)]
            offset += n
        } while offset < profile.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in profile { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        stream += be32(Int(b << 16 | a))
        return pngChunk("iCCP", Array("ICC Profile".utf8) + [0, 0] + stream)
    }

    /// A `gAMA` chunk for gamma `value` (× 100000).
    static func gAMA(_ value: Int) -> [UInt8] { pngChunk("gAMA", be32(value)) }

    /// The simple-format WebP `webp` rewritten in the extended format with an `ICCP` chunk.
    static func webp(_ webp: [UInt8], width: Int, height: Int, embedding profile: [UInt8]) -> [UInt8] {
        let flags: [UInt8] = [0x20, 0, 0, 0]
        let canvas = le24(width - 1) + le24(height - 1)
        var body = Array("WEBP".utf8)
        body += Array("VP8X".utf8) + le32(10) + flags + canvas
        body += Array("ICCP".utf8) + le32(profile.count) + profile + (profile.count & 1 == 1 ? [0] : [])
        body += webp[12...]
        return Array("RIFF".utf8) + le32(body.count) + body
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
    static func le24(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF)] }

    /// CRC-32 (ISO 3309, as PNG uses), bit by bit.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }

    /// Whether `pixel` (BGRA bytes) is within `tolerance` of `rgb` (unrounded), channel by channel.
    static func near(_ pixel: [UInt8], rgb expected: [Double], tolerance: Double) -> Bool {
        let rgb = [Double(pixel[2]), Double(pixel[1]), Double(pixel[0])]
        return zip(rgb, expected).allSatisfy { abs($0 - $1) <= tolerance }
    }
}
