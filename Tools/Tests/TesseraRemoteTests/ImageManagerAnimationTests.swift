import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
import TesseraRemote
import TesseraTesting
import TesseraTestSupport

@Suite("ImageManager delivers animations")
struct ImageManagerAnimationTests {
    @Test("every frame of an animated GIF, resized, with its durations and loop count; limits refuse a large one")
    func animation() async throws {
        let url = URL(string: "https://images.example/moving.gif")!
        func colour(_ bgra: [UInt8]) -> Animation.Frame {
            let image = Bitmap(width: 20, height: 10, style: .bgra32) { view in
                for y in 0..<10 { for x in 0..<20 { for c in 0..<4 { view.row(y).storeBytes(of: bgra[c], toByteOffset: x * 4 + c, as: UInt8.self) } } }
            }
            return Animation.Frame(image: image, duration: .milliseconds(120))
        }
        let source = Animation(canvasSize: PixelSize(width: 20, height: 10),
                               frames: [colour([0, 0, 255, 255]), colour([255, 0, 0, 255])], loopCount: 0)
        let loader = MockDataLoader()
        loader.set(.init(body: Data(try GIFEncoder().encode(source))), for: url)
        let manager = try ImageManager(configuration: .init(), loader: loader)
        let animation = try await manager.animation(for: url, processing: ImageProcessing(width: 10))
        #expect(animation.frames.count == 2 && animation.loopCount == 0)
        #expect(animation.frames.allSatisfy { $0.image.width == 10 && $0.image.height == 5 && $0.duration == .milliseconds(120) })
        #expect(animation.frames[0].image.pixel(x: 5, y: 2) == [0, 0, 255, 255] && animation.frames[1].image.pixel(x: 5, y: 2) == [255, 0, 0, 255])

        let strict = try ImageManager(configuration: .init(), loader: loader, decoder: ImageDecoder(limits: DecodingLimits(maximumFrameCount: 1)))
        await #expect(throws: ImageDecoder.RenderError.self) { _ = try await strict.animation(for: url) }
    }
}
