import Foundation
import Testing
import TesseraTestSupport

/// Byte surgery and command-line tools that make the damaged, cut and unusual files of the Chromium
/// oracle suite from the real photographs (``RealPhotos``), in the test, deterministically.
enum OracleFixtures {
    // MARK: Tools

    /// Runs `/usr/bin/<tool> arguments…` and requires it to succeed (`scripts/setup` installs them:
    /// jpegtran from libjpeg-turbo-progs, cwebp and webpmux from webp, vips from libvips-tools).
    static func tool(_ tool: String, _ arguments: [String]) async throws {
        let path = "/usr/bin/" + tool
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) (scripts/setup installs it)")
        let run = try await ProgramRun.run(URL(fileURLWithPath: path), arguments)
        try #require(run.status == 0, "\(run)")
    }

    /// The smallest JPEG photograph, its top-left `width`×`height` cropped losslessly by jpegtran and
    /// written baseline (sizes that are not multiples of the MCU keep partial edge blocks).
    static func baselineJPEG(_ scratch: ScratchDirectory, width: Int = 803, height: Int = 601) async throws -> String {
        let source = try #require(try RealPhotos.smallest(1, ext: "jpg").first)
        let out = scratch.path("baseline.jpg")
        if FileManager.default.fileExists(atPath: out) { return out }
        try await tool("jpegtran", ["-copy", "all", "-crop", "\(width)x\(height)+0+0", "-outfile", out, source.path])
        try #require(frameMarker(Array(try Data(contentsOf: URL(fileURLWithPath: out)))) == 0xC0, "jpegtran wrote a baseline file")
        return out
    }

    /// ``baselineJPEG(_:width:height:)`` made progressive by jpegtran (the same coefficients, libjpeg's default scan script).
    static func progressiveJPEG(_ scratch: ScratchDirectory) async throws -> String {
        let baseline = try await baselineJPEG(scratch)
        let out = scratch.path("progressive.jpg")
        try await tool("jpegtran", ["-copy", "all", "-progressive", "-outfile", out, baseline])
        try #require(frameMarker(Array(try Data(contentsOf: URL(fileURLWithPath: out)))) == 0xC2, "jpegtran wrote a progressive file")
        return out
    }

    /// ``baselineJPEG(_:width:height:)`` with a restart marker after every MCU row (jpegtran `-restart 1`).
    static func restartJPEG(_ scratch: ScratchDirectory) async throws -> String {
        let baseline = try await baselineJPEG(scratch)
        let out = scratch.path("restart.jpg")
        try await tool("jpegtran", ["-copy", "all", "-restart", "1", "-outfile", out, baseline])
        return out
    }

    /// `bytes` with `count` junk bytes (no FF) written over the middle of the entropy-coded segment
    /// between the middle two restart markers, starting after a byte that is not FF (so that no
    /// stuffed FF 00 pair is split into a marker).
    static func corruptingMiddleRestartSegment(_ bytes: [UInt8], count: Int = 24) throws -> (bytes: [UInt8], offset: Int) {
        let restarts = (2..<bytes.count - 1).filter { bytes[$0] == 0xFF && (0xD0...0xD7).contains(bytes[$0 + 1]) }
        try #require(restarts.count >= 4, "restart markers in the file (\(restarts.count))")
        let start = restarts[restarts.count / 2 - 1] + 2, end = restarts[restarts.count / 2]
        try #require(end - start > count + 4, "a restart segment longer than \(count + 4) bytes")
        var offset = start + (end - start - count) / 2
        while bytes[offset - 1] == 0xFF { offset += 1 }
        var out = bytes
        out.replaceSubrange(offset..<offset + count, with: junk(count, seed: 0xC0FFEE))
        return (out, offset)
    }

    /// ``baselineJPEG(_:width:height:)``'s pixels as a PNG by vips, metadata stripped: RGB, or with
    /// `alpha` RGBA with the alpha channel of the smallest PNG (translucent artwork) over the same
    /// corner; `interlaced` writes Adam7.
    static func png(_ scratch: ScratchDirectory, alpha: Bool, interlaced: Bool = false) async throws -> String {
        let jpeg = try await baselineJPEG(scratch)
        let rgb = scratch.path("rgb.png")
        try await tool("vips", ["copy", jpeg, rgb + "[strip]"])
        var current = rgb
        if alpha {
            let artwork = try #require(try RealPhotos.smallest(1, ext: "png").first)
            let size = try RealPhotos.size(of: rgb)
            let cropped = scratch.path("artwork.png"), band = scratch.path("alpha.png"), joined = scratch.path("rgba.png")
            try await tool("vips", ["crop", artwork.path, cropped, "0", "0", "\(size.width)", "\(size.height)"])
            try await tool("vips", ["extract_band", cropped, band, "3"])
            try await tool("vips", ["bandjoin", "\(rgb) \(band)", joined + "[strip]"])
            current = joined
        }
        let out = scratch.path("photo-\(alpha ? "rgba" : "rgb")\(interlaced ? "-adam7" : "").png")
        try await tool("vips", ["copy", current, out + (interlaced ? "[interlace,strip]" : "[strip]")])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        try #require(bytes.count > 33 && bytes[25] == (alpha ? 6 : 2) && bytes[28] == (interlaced ? 1 : 0),
                     "vips wrote colour type \(bytes[25]), interlace \(bytes[28])")
        return out
    }

    /// ``baselineJPEG(_:width:height:)`` as WebP by cwebp (lossy at quality 80, or lossless).
    static func webp(_ scratch: ScratchDirectory, lossless: Bool) async throws -> String {
        let jpeg = try await baselineJPEG(scratch)
        let out = scratch.path(lossless ? "lossless.webp" : "lossy.webp")
        try await tool("cwebp", ["-quiet"] + (lossless ? ["-lossless"] : ["-q", "80"]) + [jpeg, "-o", out])
        return out
    }

    /// `webp` with an EXIF chunk (webpmux) whose orientation is `orientation`.
    static func webpWithOrientation(_ webp: String, orientation: UInt16, scratch: ScratchDirectory) async throws -> String {
        let exif = scratch.path("orientation.exif")
        try Data(exifBlob(orientation: orientation)).write(to: URL(fileURLWithPath: exif))
        let out = scratch.path("oriented-" + (webp as NSString).lastPathComponent)
        try await tool("webpmux", ["-set", "exif", exif, webp, "-o", out])
        return out
    }

    static func read(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    // MARK: JPEG

    /// Offsets of every `FF marker` pair after the SOI (entropy-coded data stuffs its FF bytes with 00,
    /// so for marker codes other than 00 and FF these are real markers).
    static func markerOffsets(_ marker: UInt8, in bytes: [UInt8]) -> [Int] {
        guard bytes.count > 3 else { return [] }
        return (2..<bytes.count - 1).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == marker }
    }

    /// The first frame marker (C0 baseline, C1 extended, C2 progressive), walking the header segments.
    static func frameMarker(_ bytes: [UInt8]) -> UInt8? {
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if (0xC0...0xC2).contains(marker) { return marker }
            if marker == 0xDA { return nil }
            offset += 2 + Int(bytes[offset + 2]) << 8 + Int(bytes[offset + 3])
        }
        return nil
    }

    /// `bytes` with `inserted` placed before the first `marker`.
    static func inserting(_ inserted: [UInt8], beforeFirst marker: UInt8, in bytes: [UInt8]) throws -> [UInt8] {
        let offset = try #require(markerOffsets(marker, in: bytes).first, "a marker FF \(String(format: "%02X", marker))")
        return Array(bytes[..<offset]) + inserted + Array(bytes[offset...])
    }

    /// A segment `FF marker` with `payload` (the length field counts itself and the payload).
    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// Deterministic junk bytes (a linear congruential sequence), none of them FF.
    static func junk(_ count: Int, seed: UInt32 = 0x7E55_E7A) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24) % 0xFF
        }
    }

    /// The offset halfway through the scan (SOS to the next marker that is not RST) holding
    /// the byte at `fraction` of the file.
    static func midScanOffset(_ bytes: [UInt8], fraction: Double) throws -> (offset: Int, scan: Int, scans: Int) {
        let scans = markerOffsets(0xDA, in: bytes)
        let target = Int(Double(bytes.count) * fraction)
        let index = try #require(scans.lastIndex { $0 <= target }, "a scan before byte \(target)")
        let start = scans[index]
        let end = (start + 2..<bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] != 0 && !(0xD0...0xD7).contains(bytes[$0 + 1]) }
            ?? bytes.count
        return ((start + end) / 2, index + 1, scans.count)
    }

    // MARK: PNG

    /// The chunks of a PNG: the offset of each chunk's length field, its type and its data's length.
    static func pngChunks(_ bytes: [UInt8]) -> [(offset: Int, type: String, length: Int)] {
        var chunks: [(Int, String, Int)] = []
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            chunks.append((offset, type, length))
            offset += 12 + length
        }
        return chunks
    }

    /// The byte halfway through the IDAT data (from the first IDAT's data to the last one's end).
    static func midIDATOffset(_ bytes: [UInt8]) throws -> Int {
        let idats = pngChunks(bytes).filter { $0.type == "IDAT" }
        let first = try #require(idats.first), last = try #require(idats.last)
        return (first.offset + 8 + last.offset + 8 + last.length) / 2
    }

    /// `bytes` without chunks of `types` and with a chunk `type`/`data` right after IHDR.
    static func pngInsertingChunk(_ type: String, _ data: [UInt8], removing types: Set<String>, in bytes: [UInt8]) -> [UInt8] {
        var out = Array(bytes[..<8])
        for chunk in pngChunks(bytes) where !types.contains(chunk.type) {
            out += bytes[chunk.offset..<chunk.offset + 12 + chunk.length]
            if chunk.type == "IHDR" {
                let body = Array(type.utf8) + data
                out += bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
            }
        }
        return out
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// CRC-32 (ISO 3309, as PNG chunks use it).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    // MARK: EXIF and GIF

    /// A little-endian TIFF header with one IFD holding Orientation (0x0112, SHORT) = `orientation`:
    /// the payload of a WebP EXIF chunk.
    static func exifBlob(orientation: UInt16) -> [UInt8] {
        [0x49, 0x49, 0x2A, 0x00, 0x08, 0x00, 0x00, 0x00,          // "II", 42, IFD at 8
         0x01, 0x00,                                              // one entry
         0x12, 0x01, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00,          // Orientation, SHORT, count 1
         UInt8(orientation & 0xFF), UInt8(orientation >> 8), 0x00, 0x00,
         0x00, 0x00, 0x00, 0x00]                                  // no next IFD
    }

    /// A GIF89a of `width`×`height` with neither a global nor a local colour table, its pixels the
    /// indices 0…3 in diagonal stripes. The LZW stream (minimum code size 2) sends a clear code before
    /// every index, so every code is 3 bits and the table never grows.
    static func gifWithoutColourTable(width: Int = 64, height: Int = 48) -> [UInt8] {
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        var codes: [UInt16] = []
        for y in 0..<height {
            for x in 0..<width { codes += [4, UInt16((x / 4 + y / 4) % 4)] }
        }
        codes.append(5)
        var packed: [UInt8] = [], accumulator: UInt32 = 0, bits = 0
        for code in codes {
            accumulator |= UInt32(code) << UInt32(bits)
            bits += 3
            while bits >= 8 {
                packed.append(UInt8(accumulator & 0xFF))
                accumulator >>= 8
                bits -= 8
            }
        }
        if bits > 0 { packed.append(UInt8(accumulator & 0xFF)) }
        var out = Array("GIF89a".utf8) + le16(width) + le16(height) + [0x00, 0x00, 0x00]   // no global table
        out += [0x2C] + le16(0) + le16(0) + le16(width) + le16(height) + [0x00]         // no local table
        out.append(2)
        for start in stride(from: 0, to: packed.count, by: 255) {
            let block = packed[start..<min(start + 255, packed.count)]
            out.append(UInt8(block.count))
            out += block
        }
        out += [0x00, 0x3B]
        return out
    }
}
