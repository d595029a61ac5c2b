import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera

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
}
