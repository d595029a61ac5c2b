import Foundation
import Testing
@_spi(Internal) import TesseraImaging
import Tessera

/// The former name of ``ContentMode/stretch``, reached through a protocol so that the test reads the
/// deprecated alias without a deprecation warning of its own.
private protocol FormerContentModeNames {
    static var fill: ContentMode { get }
}

extension ContentMode: FormerContentModeNames {}

@Suite("ContentMode: stretch is named for what it does")
struct ContentModeTests {
    @Test("stretch fills the rectangle exactly and keeps its former raw value, so keys and JSON do not change")
    func stretch() throws {
        let bounds = Rect(x: 3, y: 4, width: 100, height: 20)
        #expect(ContentMode.stretch.placement(of: PixelSize(width: 40, height: 40), in: bounds) == bounds)
        #expect(ContentMode.stretch.rawValue == "fill")
        #expect(ContentMode(rawValue: "fill") == .stretch)
        #expect(try JSONDecoder().decode(ContentMode.self, from: Data("\"fill\"".utf8)) == .stretch)
        #expect(ContentMode.allCases == [.stretch, .aspectFit, .aspectFill])
    }

    @Test("the deprecated name fill is stretch")
    func deprecatedAlias() {
        let former = (ContentMode.self as any FormerContentModeNames.Type).fill
        #expect(former == .stretch)
        #expect(former.placement(of: PixelSize(width: 10, height: 30), in: Rect(size: PixelSize(width: 50, height: 50)))
                == Rect(size: PixelSize(width: 50, height: 50)))
    }
}
