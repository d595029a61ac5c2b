import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging

/// A `width`×`height` frame of one premultiplied BGRA colour, the left half `left` when given.
private func frame(_ colour: [UInt8], left: [UInt8]? = nil, width: Int = 8, height: Int = 6) -> Bitmap {
    Bitmap(width: width, height: height, style: .bgra32) { view in
        for y in 0..<height {
            let row = view.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width { for c in 0..<4 { row[x * 4 + c] = (x < width / 2 ? left ?? colour : colour)[c] } }
        }
    }
}

private let redBGRA: [UInt8] = [0, 0, 255, 255], greenBGRA: [UInt8] = [0, 255, 0, 255], blueBGRA: [UInt8] = [255, 0, 0, 255]
private let clearBGRA: [UInt8] = [0, 0, 0, 0]

/// Three frames of 8×6 (red, green, blue), shown 100, 250 and 40 ms, looping for ever.
private let threeColours = Animation(canvasSize: PixelSize(width: 8, height: 6), frames: [
    Animation.Frame(image: frame(redBGRA), duration: .milliseconds(100)),
    Animation.Frame(image: frame(greenBGRA), duration: .milliseconds(250)),
    Animation.Frame(image: frame(blueBGRA), duration: .milliseconds(40)),
], loopCount: 0)

private func close(_ a: [UInt8], _ b: [UInt8], _ tolerance: Int = 3) -> Bool { zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance } }

@Suite("Animations written: GIF and WebP frame by frame, and processed with one geometry")
struct AnimationEncodingTests {
    @Test("GIF and WebP (lossy, lossless) keep every frame, its duration and the loop count", arguments: [
        ImageEncoder(format: .gif), ImageEncoder(format: .webp, quality: 90), ImageEncoder(format: .webp, lossless: true),
    ])
    func roundTrip(encoder: ImageEncoder) throws {
        let file = try encoder.encode(threeColours)
        #expect(file.withUnsafeBytes { ImageFileFormat(sniffing: $0) } == encoder.format)
        let decoded = try ImageDecoder().animation(Data(file))
        #expect(decoded.canvasSize == threeColours.canvasSize)
        #expect(decoded.loopCount == 0)
        #expect(decoded.frames.map(\.duration) == [.milliseconds(100), .milliseconds(250), .milliseconds(40)])
        try #require(decoded.frames.count == 3)
        let tolerance = encoder.format == .webp && !encoder.lossless ? 12 : 0
        for (frame, colour) in zip(decoded.frames, [redBGRA, greenBGRA, blueBGRA]) {
            #expect(close(frame.image.pixel(x: 1, y: 1), colour, tolerance) && close(frame.image.pixel(x: 6, y: 4), colour, tolerance))
        }
    }

    @Test("GIF: a pixel under half opacity is transparent, every frame disposed to the background; no loop count, played once")
    func gifTransparency() throws {
        let animation = Animation(canvasSize: PixelSize(width: 8, height: 6), frames: [
            Animation.Frame(image: frame(redBGRA, left: clearBGRA), duration: .milliseconds(100)),
            Animation.Frame(image: frame(greenBGRA, left: [0, 50, 0, 100]), duration: .milliseconds(100)),
        ], loopCount: nil)
        let decoded = try ImageDecoder().animation(Data(try GIFEncoder().encode(animation)))
        try #require(decoded.frames.count == 2)
        #expect(decoded.loopCount == nil)
        #expect(decoded.frames[0].image.pixel(x: 1, y: 1) == clearBGRA && decoded.frames[0].image.pixel(x: 6, y: 1) == redBGRA)
        #expect(decoded.frames[1].image.pixel(x: 1, y: 1) == clearBGRA, "disposed: the first frame's red does not show through")
        #expect(decoded.frames[1].image.pixel(x: 6, y: 1) == greenBGRA)
        #expect(GIFEncoder.hundredths(.milliseconds(1234)) == 123 && GIFEncoder.hundredths(.seconds(1000)) == 65_535)
    }

    @Test("a still GIF; a still format given an animation writes its first frame")
    func stills() throws {
        let still = try ImageDecoder().decode(Data(try ImageEncoder(format: .gif).encode(frame(blueBGRA))))
        #expect(still.width == 8 && still.pixel(x: 3, y: 3) == blueBGRA)
        let png = try ImageEncoder(format: .png).encode(threeColours)
        #expect(try ImageDecoder().probe(Data(png)).frameCount == 1)
        #expect(try ImageDecoder().decode(Data(png)).pixel(x: 0, y: 0) == redBGRA)
        #expect(ImageFileFormat.encodable == [.jpeg, .png, .webp, .gif, .avif] && ImageFileFormat.allCases.filter(\.canAnimate) == [.webp, .gif])
    }

    @Test("renderAnimation: every frame through the processing with one geometry (a trim decided on the first frame)")
    func render() throws {
        // 40×20 frames: a 10-pixel white border on the first frame only, then red, then green inside.
        func bordered(_ inside: [UInt8], border: [UInt8]) -> Bitmap {
            Bitmap(width: 40, height: 20, style: .bgra32) { view in
                for y in 0..<20 {
                    let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<40 { for c in 0..<4 { row[x * 4 + c] = (x < 10 || x >= 30 ? border : inside)[c] } }
                }
            }
        }
        let white: [UInt8] = [255, 255, 255, 255]
        let source = Animation(canvasSize: PixelSize(width: 40, height: 20), frames: [
            Animation.Frame(image: bordered(redBGRA, border: white), duration: .milliseconds(70)),
            Animation.Frame(image: bordered(greenBGRA, border: greenBGRA), duration: .milliseconds(90)),
        ], loopCount: 3)
        let file = Data(try ImageEncoder(format: .webp, lossless: true).encode(source))
        var processing = ImageProcessing(width: 10)
        let resized = try ImageDecoder().renderAnimation(file, processing: processing)
        #expect(resized.frames.count == 2 && resized.loopCount == 3)
        #expect(resized.frames.map(\.duration) == [.milliseconds(70), .milliseconds(90)])
        #expect(resized.canvasSize == PixelSize(width: 10, height: 5) && resized.frames.allSatisfy { $0.image.width == 10 && $0.image.height == 5 })
        processing.width = nil
        processing.trim = 10
        let trimmed = try ImageDecoder().renderAnimation(file, processing: processing)
        #expect(trimmed.frames.map { $0.image.width } == [20, 20], "the first frame's trim, on every frame")
        #expect(trimmed.frames[1].image.pixel(x: 0, y: 0) == greenBGRA)
        let limited = ImageDecoder(limits: DecodingLimits(maximumAnimationPixelCount: 40 * 20 * 2 - 1))
        #expect(throws: ImageDecoder.RenderError.self) { _ = try limited.renderAnimation(file, processing: ImageProcessing()) }
    }
}
