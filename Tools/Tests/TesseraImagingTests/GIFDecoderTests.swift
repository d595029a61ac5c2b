import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("GIF frame placement")
struct GIFDecoderTests {
    typealias S = CodecTestSupport

    /// A GIF89a with a 4-colour global map (black, green, red, white) and one frame whose pixels are
    /// all `index`. The LZW stream sends a clear code before every pixel, so every code stays 3 bits.
    static func gif(screen: (Int, Int), frame: (left: Int, top: Int, width: Int, height: Int), index: Int,
                    transparent: Int? = nil) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        var out: [UInt8] = Array("GIF89a".utf8) + le16(screen.0) + le16(screen.1) + [0x81, 0, 0]
        out += [0, 0, 0, 0, 255, 0, 255, 0, 0, 255, 255, 255]
        if let transparent { out += [0x21, 0xF9, 4, 1, 0, 0, UInt8(transparent), 0] }
        out += [0x2C] + le16(frame.left) + le16(frame.top) + le16(frame.width) + le16(frame.height) + [0]
        var codes: [Int] = []
        for _ in 0..<(frame.width * frame.height) { codes += [4, index] }
        codes.append(5)
        var packed: [UInt8] = [], bits = 0, count = 0
        for code in codes {
            bits |= code << count; count += 3
            while count >= 8 { packed.append(UInt8(bits & 0xFF)); bits >>= 8; count -= 8 }
        }
        if count > 0 { packed.append(UInt8(bits & 0xFF)) }
        out.append(2)
        var offset = 0
        while offset < packed.count {
            let block = packed[offset..<min(packed.count, offset + 255)]
            out.append(UInt8(block.count)); out += block; offset += block.count
        }
        return out + [0, 0x3B]
    }

    @Test("a frame hanging over the bottom-right edge is clipped onto a transparent canvas")
    func clipped() throws {
        let (info, bitmap) = try S.decode(Self.gif(screen: (4, 4), frame: (2, 2, 4, 4), index: 1), with: GIFDecoder())
        #expect(info.storedSize == PixelSize(width: 4, height: 4))
        #expect(info.hasAlpha)
        for y in 0..<4 {
            for x in 0..<4 {
                let expected: [UInt8] = x >= 2 && y >= 2 ? [0, 255, 0, 255] : [0, 0, 0, 0]
                #expect(bitmap.pixel(x: x, y: y) == expected, "(\(x), \(y))")
            }
        }
    }

    @Test("a frame entirely outside the screen leaves it transparent")
    func outside() throws {
        let (_, bitmap) = try S.decode(Self.gif(screen: (3, 2), frame: (10, 10, 2, 2), index: 2), with: GIFDecoder())
        #expect(bitmap.pixel(x: 2, y: 1) == [0, 0, 0, 0])
    }

    @Test("a full-screen frame without transparency is opaque")
    func opaque() throws {
        let (info, bitmap) = try S.decode(Self.gif(screen: (3, 3), frame: (0, 0, 3, 3), index: 2), with: GIFDecoder())
        #expect(!info.hasAlpha)
        #expect(bitmap.pixel(x: 1, y: 1) == [0, 0, 255, 255])
    }

    @Test("the transparent index from the graphics control extension is honoured")
    func transparentIndex() throws {
        let (info, bitmap) = try S.decode(Self.gif(screen: (3, 3), frame: (0, 0, 3, 3), index: 3, transparent: 3), with: GIFDecoder())
        #expect(info.hasAlpha)
        #expect(bitmap.pixel(x: 0, y: 0) == [0, 0, 0, 0])
    }

    @Test("a GIF without any frame is a codec error")
    func noFrame() {
        let file: [UInt8] = Array("GIF89a".utf8) + [2, 0, 2, 0, 0, 0, 0, 0x3B]
        #expect(S.failure { _ = try S.decode(file, with: GIFDecoder()) } == .decoding(.codec(.gif, message: "the file has no image")))
    }
}
