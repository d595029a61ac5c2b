import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Hostile decoder input: deflate bombs, lying sizes")
struct CodecHostileInputTests {
    typealias B = CodecBadInputTests

    /// A zlib stream (fixed-Huffman deflate, built here) that inflates to `count` zero bytes: one
    /// literal, then back-references of length 258 at distance 1, about 160:1.
    static func zlibZeros(_ count: Int) -> [UInt8] {
        var out: [UInt8] = [], acc = 0, n = 0
        func bits(_ value: Int, _ width: Int) {   // LSB first, as deflate packs header bits
            for i in 0..<width {
                acc |= (value >> i & 1) << n
                n += 1
                if n == 8 { out.append(UInt8(acc)); acc = 0; n = 0 }
            }
        }
        func huffman(_ code: Int, _ width: Int) {   // Huffman codes go most significant bit first
            for i in stride(from: width - 1, through: 0, by: -1) { bits(code >> i & 1, 1) }
        }
        bits(1, 1); bits(1, 2)                     // final block, fixed Huffman codes
        huffman(0x30, 8)                           // literal 0
        var left = count - 1
        while left >= 258 { huffman(0b1100_0101, 8); huffman(0, 5); left -= 258 }   // length 258 (285), distance 1
        while left > 0 { huffman(0x30, 8); left -= 1 }
        huffman(0, 7)                              // end of block
        if n > 0 { out.append(UInt8(acc)) }
        let adler = UInt32(count % 65521) << 16 | 1
        return [0x78, 0x01] + out + B.be32(adler)
    }

    static func png(width: Int, height: Int, colorType: UInt8, idat: [UInt8]) -> [UInt8] {
        let ihdr = B.be32(UInt32(width)) + B.be32(UInt32(height)) + [8, colorType, 0, 0, 0]
        return B.pngSignature + B.pngChunk("IHDR", ihdr) + B.pngChunk("IDAT", idat) + B.pngChunk("IEND", [])
    }

    @Test("the zlib builder is right: exactly the rows a 64×64 gray PNG needs decode to black")
    func zlibBuilderSanity() throws {
        let file = Self.png(width: 64, height: 64, colorType: 0, idat: Self.zlibZeros(64 * 65))
        let bitmap = try CodecTestSupport.decode(file, with: PNGDecoder(), style: .gray8).bitmap
        #expect(bitmap.width == 64 && bitmap.height == 64)
        #expect(bitmap.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
    }

    @Test("PNG deflate bomb: 32 MiB of IDAT data for a 64×64 image is a typed error or the 64×64 image, under either policy",
          arguments: DecodingPolicy.allCases)
    func deflateBomb(policy: DecodingPolicy) throws {
        let idat = Self.zlibZeros(32 << 20)
        #expect(idat.count < 300_000)
        let file = Self.png(width: 64, height: 64, colorType: 0, idat: idat)
        do {
            let bitmap = try CodecTestSupport.decode(file, with: PNGDecoder(limits: DecodingLimits(policy: policy)), style: .gray8).bitmap
            #expect(bitmap.width == 64 && bitmap.withUnsafeBytes { $0.allSatisfy { $0 == 0 } })
        } catch let error as TesseraError {
            switch error.reason {
            case .decoding(.codec(.png, _)), .decoding(.truncated(.png)): break
            default: Issue.record("unexpected \(error)")
            }
        }
        // The ImageDecoder path into a small target behaves the same.
        let thumb = try? ImageDecoder(limits: DecodingLimits(policy: policy)).thumbnail(Data(file), size: PixelSize(width: 8, height: 8))
        if let thumb { #expect(thumb.width == 8) }
    }

    @Test("tiny file declaring the largest allowed size with no pixel data: typed error, no hang")
    func lyingSizeWithinLimit() {
        let limits = DecodingLimits(maximumPixelCount: 4_000_000)
        let file = Self.png(width: 2000, height: 2000, colorType: 6, idat: Self.zlibZeros(100))
        #expect(file.count < 200)
        // No row arrives (100 bytes of image data for rows of 8,001): refused under either policy.
        for policy in DecodingPolicy.allCases {
            var limits = limits
            limits.policy = policy
            #expect(CodecTestSupport.failure { _ = try ImageDecoder(limits: limits).thumbnail(Data(file), size: PixelSize(width: 32, height: 32)) }
                == .decoding(.truncated(.png)), "\(policy)")
        }
        let over = Self.png(width: 2001, height: 2000, colorType: 6, idat: Self.zlibZeros(100))
        #expect(CodecTestSupport.failure { _ = try ImageDecoder(limits: limits).probe(Data(over)) }
            == .decoding(.tooManyPixels(width: 2001, height: 2000, limit: 4_000_000)))
    }

    @Test("files that lie about their format get the sniffed codec's typed error (strict), or a partial image (lenient)",
          arguments: CodecTestSupport.fixtures)
    func lyingFormat(fixture: (name: String, format: ImageFileFormat)) throws {
        let bytes = try CodecTestSupport.fixture(fixture.name)
        // The body of this file behind every other format's magic bytes.
        let magics: [ImageFileFormat: [UInt8]] = [
            .jpeg: [0xFF, 0xD8, 0xFF, 0xE0], .png: B.pngSignature,
            .gif: Array("GIF89a".utf8), .webp: Array("RIFF".utf8) + [0, 1, 0, 0] + Array("WEBP".utf8),
        ]
        for (format, magic) in magics where format != fixture.format {
            let liar = magic + bytes.dropFirst(min(bytes.count, magic.count))
            let reason = CodecTestSupport.failure { _ = try ImageDecoder(limits: .strict).decode(Data(liar)) }
            // Lenient decoding may make something of it, but never an intact image.
            if let bitmap = try? ImageDecoder().decode(Data(liar)) {
                #expect(bitmap.integrity.isPartial, "\(fixture.name) behind \(format) magic decoded as intact")
            }
            switch reason {
            case .decoding(.codec(let f, _)), .decoding(.truncated(let f)): #expect(f == format, "\(fixture.name) as \(format)")
            case .decoding(.invalidDimensions), .decoding(.tooManyPixels): break
            default: Issue.record("\(fixture.name) behind \(format) magic: \(String(describing: reason))")
            }
        }
    }

    /// A chunk header declaring about 2 GiB with a few hundred bytes left (found by the fuzzer): libpng
    /// allocates a chunk's declared length before reading it, so the decoder gives libpng the file only up
    /// to such a chunk. Before the image data that leaves no rows: truncated under both policies. After it,
    /// every row has arrived: lenient decodes them (truncated: no IEND), strict refuses.
    @Test("a PNG chunk declaring 2 GiB is the end of the file, never a 2 GiB allocation")
    func chunkDeclaringGigabytes() throws {
        let ihdr = B.be32(8) + B.be32(8) + [8, 2, 0, 0, 0]
        let rows = [UInt8]((0..<8).flatMap { _ in [0] + [UInt8](repeating: 0x40, count: 24) })
        let idat = B.pngChunk("IDAT", zlibStored(rows))
        var lying = B.be32(0x7800_0019) + Array("tEXt".utf8)
        lying += [UInt8](repeating: 0x41, count: 400)
        let before = B.pngSignature + B.pngChunk("IHDR", ihdr) + lying
        for limits in [DecodingLimits(), .strict] {
            let reason = CodecTestSupport.failure { _ = try ImageDecoder(limits: limits).decode(Data(before)) }
            #expect(reason == .decoding(.truncated(.png)), "\(limits.policy): \(String(describing: reason))")
        }
        let after = B.pngSignature + B.pngChunk("IHDR", ihdr) + idat + lying
        let image = try ImageDecoder().decode(Data(after))
        #expect(image.integrity == .truncated)
        #expect(image.pixel(x: 4, y: 7) == [0x40, 0x40, 0x40, 255])
        let strict = CodecTestSupport.failure { _ = try ImageDecoder(limits: .strict).decode(Data(after)) }
        #expect(strict == .decoding(.truncated(.png)))
    }

    /// `bytes` as a zlib stream of stored (uncompressed) deflate blocks.
    func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var blocks = stride(from: 0, to: bytes.count, by: 65_535).map { Array(bytes[$0..<min($0 + 65_535, bytes.count)]) }
        if blocks.isEmpty { blocks = [[]] }
        for (index, block) in blocks.enumerated() {
            let length = UInt16(block.count)
            out += [index == blocks.count - 1 ? 1 : 0, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            out += block
        }
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + B.be32(b << 16 | a)
    }
}
