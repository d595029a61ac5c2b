import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraTestSupport

/// `ImageProcessor`: rounded corners and circles (with and without a border) checked pixel by pixel on a
/// known source, custom processors, identities, and errors from a custom step.
@Suite("image processors")
struct ImageProcessorTests {
    /// An opaque 80×40 image: red left half, blue right half (bgra32, premultiplied = straight when opaque).
    static func halves() -> Bitmap {
        Bitmap(width: 80, height: 40, style: .bgra32) { view in
            for y in 0..<40 {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<80 {
                    let bgra: [UInt8] = x < 40 ? [0, 0, 255, 255] : [255, 0, 0, 255]
                    for c in 0..<4 { row[x * 4 + c] = bgra[c] }
                }
            }
        }
    }

    static func near(_ a: [UInt8], _ b: [UInt8], tolerance: Int = 2) -> Bool {
        zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= tolerance }
    }

    @Test("rounded corners: transparent corners, the picture untouched inside, the input's size")
    func roundedCorners() throws {
        let out = try ImageProcessor.roundedCorners(radius: 12).process(Self.halves())
        #expect(out.width == 80 && out.height == 40 && out.style == .bgra32)
        for corner in [(0, 0), (79, 0), (0, 39), (79, 39), (1, 1), (78, 38)] {
            #expect(out.pixel(x: corner.0, y: corner.1)[3] == 0, "corner \(corner) is transparent")
        }
        #expect(Self.near(out.pixel(x: 12, y: 0), [0, 0, 255, 255]), "the top edge past the radius is opaque")
        #expect(Self.near(out.pixel(x: 20, y: 20), [0, 0, 255, 255]))
        #expect(Self.near(out.pixel(x: 60, y: 20), [255, 0, 0, 255]))
        // At 45° the arc passes r·(1 − 1/√2) ≈ 3.5 px in from each edge: (2, 2) is outside, (5, 5) inside.
        #expect(out.pixel(x: 2, y: 2)[3] < 64)
        #expect(out.pixel(x: 5, y: 5)[3] == 255)
    }

    @Test("a circle is the centred square of the input, transparent outside the circle")
    func circle() throws {
        let out = try ImageProcessor.circle().process(Self.halves())
        #expect(out.width == 40 && out.height == 40)
        // Pixel (3, 3)'s centre lies 16.5·√2 ≈ 23.3 px from the centre (20, 20): outside the radius 20.
        // The centred square spans x 20..<60 of the source: red on its left half, blue on its right.
        #expect(Self.near(out.pixel(x: 10, y: 20), [0, 0, 255, 255]))
        #expect(Self.near(out.pixel(x: 30, y: 20), [255, 0, 0, 255]))
        for outside in [(0, 0), (39, 0), (0, 39), (39, 39), (3, 3)] {
            #expect(out.pixel(x: outside.0, y: outside.1)[3] == 0, "\(outside) lies outside the circle")
        }
        #expect(out.pixel(x: 0, y: 20)[3] > 64 && out.pixel(x: 20, y: 0)[3] > 64, "the circle touches every edge")
    }

    @Test("a border draws its colour along the edge and leaves the picture inside")
    func border() throws {
        let green = Color(red: 0, green: 1, blue: 0)
        let circle = try ImageProcessor.circle(border: .init(width: 4, color: green)).process(Self.halves())
        #expect(Self.near(circle.pixel(x: 1, y: 20), [0, 255, 0, 255], tolerance: 40), "the ring at the left edge")
        #expect(Self.near(circle.pixel(x: 20, y: 2), [0, 255, 0, 255], tolerance: 40), "the ring at the top edge")
        #expect(Self.near(circle.pixel(x: 10, y: 20), [0, 0, 255, 255]), "the picture inside the ring")
        let card = try ImageProcessor.roundedCorners(radius: 8, border: .init(width: 3, color: green)).process(Self.halves())
        #expect(Self.near(card.pixel(x: 40, y: 1), [0, 255, 0, 255], tolerance: 40))
        #expect(Self.near(card.pixel(x: 40, y: 38), [0, 255, 0, 255], tolerance: 40))
        #expect(Self.near(card.pixel(x: 20, y: 20), [0, 0, 255, 255]))
        #expect(card.pixel(x: 0, y: 0)[3] == 0)
    }

    @Test("custom processors run in order; identities name every step and its parameters")
    func customAndIdentity() throws {
        let flip = ImageProcessor(identifier: "test.flip") { image in
            try Bitmap.drawing(size: image.layout.size) { context in
                try context.draw(image, in: Rect(size: image.layout.size), orientation: .upMirrored)
            }
        }
        let out = try ImageProcessor.apply([flip, .circle()], to: Self.halves())
        #expect(Self.near(out.pixel(x: 10, y: 20), [255, 0, 0, 255]), "mirrored first, so blue is on the left")
        #expect(ImageProcessor.identity(of: [flip, .circle()]) == "test.flip|tessera.circle(-)")
        #expect(ImageProcessor.identity(of: []) == "")
        #expect(ImageProcessor.roundedCorners(radius: 12) == .roundedCorners(radius: 12))
        #expect(ImageProcessor.roundedCorners(radius: 12) != .roundedCorners(radius: 13))
        #expect(ImageProcessor.circle() != .circle(border: .init(width: 1, color: .black)))
        #expect(ImageProcessor.circle(border: .init(width: 1, color: .black)) != .circle(border: .init(width: 1, color: .white)))
    }

    @Test("the output keeps the input's integrity: a circle cut from a partial decode is partial, the worse of the two wins")
    func integrityCarried() throws {
        for integrity in [DecodeIntegrity.intact, .damaged, .truncated] {
            var input = Self.halves()
            input.integrity = integrity
            #expect(try ImageProcessor.circle().process(input).integrity == integrity)
            #expect(try ImageProcessor.apply([.roundedCorners(radius: 4), .circle()], to: input).integrity == integrity)
        }
        // A processor that reports damage of its own keeps it over an intact input, and the worse of two.
        let damaging = ImageProcessor(identifier: "test.damaging") { image in
            var out = image
            out.integrity = .damaged
            return out
        }
        #expect(try damaging.process(Self.halves()).integrity == .damaged)
        var truncated = Self.halves()
        truncated.integrity = .truncated
        #expect(try damaging.process(truncated).integrity == .truncated)
    }

    @Test("an error in a custom step is a TesseraError naming the processor, with the original underneath")
    func customError() {
        struct Refused: Error {}
        let failing = ImageProcessor(identifier: "test.refuses") { _ in throw Refused() }
        do {
            _ = try failing.process(Self.halves())
            Issue.record("the processor's error must surface")
        } catch {
            #expect(error.reason == .drawing(message: "processor test.refuses failed"))
            #expect(error.underlying is Refused)
        }
    }
}
