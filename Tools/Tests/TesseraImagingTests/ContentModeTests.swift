import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera

/// The former names of the modes, reached through a protocol so that the test reads the deprecated
/// aliases without deprecation warnings of its own.
private protocol FormerContentModeNames {
    static var aspectFit: ContentMode { get }
    static var aspectFill: ContentMode { get }
    static var force: ContentMode { get }
}

extension ContentMode: FormerContentModeNames {}

@Suite("ContentMode: the one mode type")
struct ContentModeTests {
    @Test("one type for drawing and processing: ImageProcessing.Mode is ContentMode, with the URL texts as raw values")
    func oneType() throws {
        #expect(ImageProcessing.Mode.self == ContentMode.self)
        #expect(ContentMode.allCases.map(\.rawValue) == ["fit", "fill", "fill-down", "force", "pad", "cover"])
        #expect(ContentMode(rawValue: "fill") == .fill, "fill crops, in URLs, recipes and code alike")
        #expect(ContentMode(rawValue: "force") == .stretch)
        #expect(try JSONDecoder().decode(ContentMode.self, from: Data("\"aspectFill\"".utf8)) == .fill)
        #expect(try JSONDecoder().decode(ContentMode.self, from: Data("\"aspectFit\"".utf8)) == .fit)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ContentMode.self, from: Data("\"contain\"".utf8)) }
        #expect(try JSONDecoder().decode(ContentMode.self, from: Data("\"cover\"".utf8)) == .cover)
        #expect(ContentMode(name: "aspectFill") == .fill && ContentMode(name: "pad") == .pad && ContentMode(name: "stretchy") == nil)
    }

    @Test("placements: stretch is the rectangle, fit and pad fit inside, fill and fill-down cover it, all centred")
    func placements() {
        let bounds = Rect(x: 3, y: 4, width: 100, height: 20)
        let square = PixelSize(width: 40, height: 40)
        #expect(ContentMode.stretch.placement(of: square, in: bounds) == bounds)
        for mode in [ContentMode.fit, .pad] {
            #expect(mode.placement(of: square, in: bounds) == Rect(x: 43, y: 4, width: 20, height: 20))
        }
        for mode in [ContentMode.fill, .fillDown] {
            #expect(mode.placement(of: square, in: bounds) == Rect(x: 3, y: -36, width: 100, height: 100))
        }
        #expect(ContentMode.fill.coveringSize(of: square, in: PixelSize(width: 100, height: 20)) == PixelSize(width: 100, height: 100))
    }

    @Test("library keys keep the texts they had (aspectFit, aspectFill, fill for stretch), so tables written before still match")
    func keyTexts() {
        #expect(ContentMode.fit.keyText == "aspectFit" && ContentMode.fill.keyText == "aspectFill" && ContentMode.stretch.keyText == "fill")
        #expect(Set(ContentMode.allCases.map(\.keyText)).count == ContentMode.allCases.count)
        let url = URL(string: "https://img.example/cat.jpg")!
        #expect(ImageKey(url: url, size: PixelSize(width: 10, height: 10)).description.hasSuffix("/aspectFill"))
    }

    @Test("the deprecated names are the same cases")
    func deprecatedAliases() {
        let former = ContentMode.self as any FormerContentModeNames.Type
        #expect(former.aspectFit == .fit && former.aspectFill == .fill && former.force == .stretch)
    }
}
