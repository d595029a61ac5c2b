import Testing
@testable import TesseraServer
import TesseraTestSupport

/// `Accept` negotiation: AVIF, else WebP, when named explicitly with q > 0; the first range naming a type decides.
@Suite("Accept negotiation")
struct OutputChoiceTests {
    @Test(arguments: [
        ("image/avif,image/webp,image/apng,image/*,*/*;q=0.8", "avif"),   // Chromium's
        ("image/webp,*/*", "webp"),
        ("image/avif;q=0,image/webp", "webp"),
        ("IMAGE/AVIF", "avif"),
        ("  image/webp ;  q=0.5 ", "webp"),
        ("image/webp;q=0", "legacy"),
        ("image/webp;q=0.000", "legacy"),
        ("image/*,*/*", "legacy"),
        ("image/avif;level=1;q=0.0, image/webp;Q=1", "webp"),
        ("image/avifx,image/web", "legacy"),
        ("", "legacy"),
        (",,;,", "legacy"),
        ("image/avif;q=abc", "avif"),
        ("image/avif;q=0, image/avif", "legacy"),
        ("text/html,\timage/webp\t;q=0.9", "webp"),
    ])
    func acceptHeaders(header: String, expected: String) throws {
        let choice = try OutputChoice(fmt: nil, accept: header)
        #expect(choice.key == "a:\(expected)", "\(header)")
    }

    @Test func noAcceptAndExplicitFormats() throws {
        #expect(try OutputChoice(fmt: nil, accept: nil).key == "a:legacy")
        #expect(try OutputChoice(fmt: "PNG", accept: "image/avif").key == "f:png")
        #expect(throws: ServiceError.self) { try OutputChoice(fmt: "bmp", accept: nil) }
    }
}
