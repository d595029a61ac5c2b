import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import Tessera
import TesseraTestSupport

/// Animated GIF and WebP built byte by byte here, so every frame's pixels, placement, disposal and
/// timing are known.
@Suite("Animated GIF and WebP: frames, disposal, durations, loop count, limits")
struct CodecAnimationTests {
    typealias S = CodecTestSupport

    struct GIFFrame {
        var rect: (left: Int, top: Int, width: Int, height: Int)
        /// Colour index of every pixel: 0 black, 1 green, 2 red, 3 white.
        var index: Int
        var delay = 0
        /// 1 keep, 2 clear to background, 3 restore previous.
        var disposal = 1
        var transparent: Int?
    }

    /// A GIF89a with the 4-colour global map of ``GIFDecoderTests/gif(screen:frame:index:transparent:)``,
    /// a NETSCAPE2.0 loop extension when `loop` is set, and the frames in order.
    static func gif(screen: (Int, Int), loop: Int?, frames: [GIFFrame]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        var out: [UInt8] = Array("GIF89a".utf8) + le16(screen.0) + le16(screen.1) + [0x81, 0, 0]
        out += [0, 0, 0, 0, 255, 0, 255, 0, 0, 255, 255, 255]
        if let loop { out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le16(loop) + [0] }
        for frame in frames {
            let flags = UInt8(frame.disposal << 2 | (frame.transparent == nil ? 0 : 1))
            out += [0x21, 0xF9, 4, flags] + le16(frame.delay) + [UInt8(frame.transparent ?? 0), 0]
            // One image: reuse the single-frame builder's descriptor and LZW data.
            let single = GIFDecoderTests.gif(screen: screen, frame: frame.rect, index: frame.index)
            let descriptor = single.firstIndex(of: 0x2C)!
            out += single[descriptor..<(single.count - 1)]
        }
        return out + [0x3B]
    }

    static let red: [UInt8] = [0, 0, 255, 255], green: [UInt8] = [0, 255, 0, 255], white: [UInt8] = [255, 255, 255, 255]
    static let clear: [UInt8] = [0, 0, 0, 0]

    @Test("GIF: frames composited in order; disposal 2 clears the frame's rectangle; delays and loop count")
    func gifBackgroundDisposal() throws {
        let file = Self.gif(screen: (4, 4), loop: 0, frames: [
            GIFFrame(rect: (0, 0, 4, 4), index: 2, delay: 10),
            GIFFrame(rect: (0, 0, 2, 2), index: 1, delay: 20, disposal: 2),
            GIFFrame(rect: (3, 3, 1, 1), index: 3, delay: 3),
        ])
        #expect(try ImageDecoder().probe(Data(file)).frameCount == 3)
        let animation = try ImageDecoder().animation(Data(file))
        #expect(animation.canvasSize == PixelSize(width: 4, height: 4))
        #expect(animation.loopCount == 0)
        #expect(animation.frames.map(\.duration) == [.milliseconds(100), .milliseconds(200), .milliseconds(30)])
        try #require(animation.frames.count == 3)
        let (first, second, third) = (animation.frames[0].image, animation.frames[1].image, animation.frames[2].image)
        #expect(first.pixel(x: 0, y: 0) == Self.red && first.pixel(x: 3, y: 3) == Self.red)
        #expect(second.pixel(x: 1, y: 1) == Self.green && second.pixel(x: 2, y: 2) == Self.red)
        #expect(third.pixel(x: 0, y: 0) == Self.clear && third.pixel(x: 1, y: 1) == Self.clear, "frame 2's rectangle was cleared")
        #expect(third.pixel(x: 2, y: 0) == Self.red && third.pixel(x: 3, y: 3) == Self.white)
        // A still decode is the first frame.
        #expect(try ImageDecoder().decode(Data(file)).pixel(x: 0, y: 0) == Self.red)
    }

    @Test("GIF: disposal 3 restores the canvas from before the frame; transparent pixels show what is below")
    func gifPreviousDisposal() throws {
        let file = Self.gif(screen: (3, 1), loop: nil, frames: [
            GIFFrame(rect: (0, 0, 3, 1), index: 2),
            GIFFrame(rect: (0, 0, 2, 1), index: 1, disposal: 3),
            GIFFrame(rect: (1, 0, 2, 1), index: 0, transparent: 0),
        ])
        let animation = try ImageDecoder().animation(Data(file))
        try #require(animation.frames.count == 3)
        #expect(animation.loopCount == nil)
        #expect(animation.frames[1].image.pixel(x: 0, y: 0) == Self.green && animation.frames[1].image.pixel(x: 2, y: 0) == Self.red)
        for x in 0..<3 { #expect(animation.frames[2].image.pixel(x: x, y: 0) == Self.red, "x \(x): restored, then a transparent frame") }
    }

    @Test("GIF limits: too many frames, too many pixels over all frames, and a capped probe count")
    func gifLimits() throws {
        let ten = Self.gif(screen: (64, 64), loop: 0, frames: Array(repeating: GIFFrame(rect: (0, 0, 1, 1), index: 1), count: 10))
        let fewFrames = DecodingLimits(maximumFrameCount: 3)
        #expect(S.failure { _ = try ImageDecoder(limits: fewFrames).animation(Data(ten)) } == .decoding(.tooManyFrames(limit: 3)))
        #expect(try ImageDecoder(limits: fewFrames).probe(Data(ten)).frameCount == 4, "counting stops one past the limit")
        #expect(try ImageDecoder().probe(Data(ten)).frameCount == 10)
        let fewPixels = DecodingLimits(maximumAnimationPixelCount: 64 * 64 * 5)
        #expect(S.failure { _ = try ImageDecoder(limits: fewPixels).animation(Data(ten)) }
                == .decoding(.animationTooLarge(frames: 10, width: 64, height: 64, limit: 64 * 64 * 5)))
        // A bomb: 2,000 one-pixel frames on a 1000×1000 screen, refused before the 5th canvas is allocated.
        let bomb = Self.gif(screen: (1000, 1000), loop: 0, frames: Array(repeating: GIFFrame(rect: (0, 0, 1, 1), index: 1), count: 2_000))
        let small = DecodingLimits(maximumFrameCount: 5_000, maximumAnimationPixelCount: 4_000_000)
        #expect(S.failure { _ = try bomb.withUnsafeBytes { try GIFDecoder(limits: small).decodeAnimation($0) } }
                == .decoding(.animationTooLarge(frames: 5, width: 1000, height: 1000, limit: 4_000_000)), "the codec checks each frame")
        #expect(S.failure { _ = try ImageDecoder(limits: small).animation(Data(bomb)) }
                == .decoding(.animationTooLarge(frames: 2_000, width: 1000, height: 1000, limit: 4_000_000)), "ImageDecoder checks the probed count first")
        #expect(S.failure { _ = try ImageDecoder().animation(Data(bomb)) } == .decoding(.tooManyFrames(limit: 1_000)),
                "the default limits refuse 2,000 frames")
    }

    @Test("GIF: a file cut inside the second frame still probes and decodes its first frame; the animation is truncated")
    func gifTruncated() throws {
        let file = Self.gif(screen: (2, 2), loop: 0, frames: [GIFFrame(rect: (0, 0, 2, 2), index: 2), GIFFrame(rect: (0, 0, 2, 2), index: 1)])
        let cut = Array(file.prefix(file.count - 4))
        #expect(try ImageDecoder().probe(Data(cut)).frameCount >= 1)
        #expect(try ImageDecoder().decode(Data(cut)).pixel(x: 1, y: 1) == Self.red)
        #expect(S.failure { _ = try ImageDecoder().animation(Data(cut)) } == .decoding(.truncated(.gif)))
    }

    /// An animated WebP container around lossless stills from ``WebPEncoder``: VP8X (animation and
    /// alpha flags), ANIM (loop count), and one ANMF chunk per frame (offset, size, duration, no blending).
    static func webp(canvas: (Int, Int), loop: Int, frames: [(x: Int, y: Int, image: Bitmap, duration: Int)]) throws -> [UInt8] {
        func le(_ v: Int, _ bytes: Int) -> [UInt8] { (0..<bytes).map { UInt8(v >> (8 * $0) & 0xFF) } }
        func chunk(_ tag: String, _ body: [UInt8]) -> [UInt8] {
            Array(tag.utf8) + le(body.count, 4) + body + (body.count % 2 == 1 ? [0] : [])
        }
        var body: [UInt8] = Array("WEBP".utf8)
        body += chunk("VP8X", [0x12, 0, 0, 0] + le(canvas.0 - 1, 3) + le(canvas.1 - 1, 3))
        body += chunk("ANIM", [0, 0, 0, 0] + le(loop, 2))
        for frame in frames {
            let still = try WebPEncoder(lossless: true).encode(frame.image)
            let bitstream = Array(still[12...])   // the VP8L chunk after "RIFF" size "WEBP"
            body += chunk("ANMF", le(frame.x / 2, 3) + le(frame.y / 2, 3) + le(frame.image.width - 1, 3)
                          + le(frame.image.height - 1, 3) + le(frame.duration, 3) + [0x02] + bitstream)
        }
        return Array("RIFF".utf8) + le(body.count, 4) + body
    }

    @Test("WebP: frames composited at their offsets, durations, loop count; still decode is the first frame")
    func webpAnimation() throws {
        let redFrame = try S.bitmap(width: 4, height: 4, style: .bgra32) { _, _ in Self.red }
        let greenFrame = try S.bitmap(width: 2, height: 2, style: .bgra32) { _, _ in Self.green }
        let file = try Self.webp(canvas: (4, 4), loop: 3, frames: [(0, 0, redFrame, 70), (2, 2, greenFrame, 30)])
        let info = try ImageDecoder().probe(Data(file))
        #expect(info.format == .webp && info.frameCount == 2 && info.storedSize == PixelSize(width: 4, height: 4))
        let animation = try ImageDecoder().animation(Data(file))
        #expect(animation.loopCount == 3)
        #expect(animation.frames.map(\.duration) == [.milliseconds(70), .milliseconds(30)])
        try #require(animation.frames.count == 2)
        #expect(animation.frames[0].image.pixel(x: 3, y: 3) == Self.red)
        #expect(animation.frames[1].image.pixel(x: 3, y: 3) == Self.green && animation.frames[1].image.pixel(x: 1, y: 1) == Self.red)
        let still = try ImageDecoder().decode(Data(file))
        #expect(still.width == 4 && still.pixel(x: 3, y: 3) == Self.red)
        let thumb = try ImageDecoder().thumbnail(Data(file), size: PixelSize(width: 2, height: 2))
        #expect(thumb.pixel(x: 1, y: 1) == Self.red)
        #expect(S.failure { _ = try ImageDecoder(limits: DecodingLimits(maximumFrameCount: 1)).animation(Data(file)) }
                == .decoding(.tooManyFrames(limit: 1)))
    }

    @Test("a still image is an animation of one frame")
    func stillAsAnimation() throws {
        let image = try S.bitmap(width: 3, height: 2, style: .bgra32) { _, _ in Self.white }
        let animation = try ImageDecoder().animation(Data(try PNGEncoder().encode(image)))
        #expect(animation.frames.count == 1 && animation.loopCount == nil && animation.frames[0].duration == .zero)
        #expect(animation.frames[0].image.pixel(x: 2, y: 1) == Self.white)
        #expect(try ImageDecoder().probe(Data(try PNGEncoder().encode(image))).frameCount == 1)
    }
}
