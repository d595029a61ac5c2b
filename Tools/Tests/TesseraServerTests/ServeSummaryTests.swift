import Foundation
import Testing
import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// `GET /v1/{preset}/{path}?info`: the served image's size, format and ThumbHash as JSON, equal to what the
/// image URL serves, in both orders (the summary first, then the image, and the image first, from memory,
/// then the summary), for every negotiated format, and errors as the image's own.
@Suite("tessera serve: ?info summaries")
struct ServeSummaryTests {
    struct Summary: Decodable, Equatable {
        var width: Int
        var height: Int
        var format: String
        var thumbHash: String
    }

    static func summary(_ response: RawHTTP.Response) throws -> Summary {
        try JSONDecoder().decode(Summary.self, from: Data(response.body))
    }

    /// The summary an image body calls for: its decoded size and its ThumbHash (what `?info` answers where
    /// no table slot holds the pixels, a resize for one).
    static func expected(for body: [UInt8], format: String) throws -> Summary {
        let image = try ImageDecoder().decode(Data(body))
        return Summary(width: image.width, height: image.height, format: format, thumbHash: try ThumbHash(image: image).base64)
    }

    /// The summary of a preset's image of `path`: the size and hash of the pixels in its table slot.
    static func expected(_ service: ImageService, preset: String, path: String, format: String) throws -> Summary {
        let info = ImageService.RequestInfo(route: .preset(name: preset, path: path), path: "/v1/\(preset)/\(path)",
                                            rawQuery: nil, accept: nil, ifNoneMatch: nil)
        let slot = try #require(service.slotView(of: try service.resolve(info, trustingRecentCheck: false)))
        return Summary(width: slot.width, height: slot.height, format: format, thumbHash: try ThumbHash(image: slot).base64)
    }

    @Test("the summary describes the image the same URL serves, whichever is asked first", arguments: [true, false])
    func summaryMatchesImage(summaryFirst: Bool) async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, server in
            var info: RawHTTP.Response?
            if summaryFirst { info = try await RawHTTP.get(port: port, "/v1/box/sub/tall.jpg?info") }
            let image = try await RawHTTP.get(port: port, "/v1/box/sub/tall.jpg")
            let again = try await RawHTTP.get(port: port, "/v1/box/sub/tall.jpg")
            if !summaryFirst { info = try await RawHTTP.get(port: port, "/v1/box/sub/tall.jpg?info") }
            let answer = try #require(info)
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "application/json")
            #expect(answer.headers["vary"] == "Accept")
            #expect(image.headers["content-type"] == "image/jpeg" && again.headers["content-type"] == "image/jpeg",
                    "the image URL never answers with the summary")
            #expect(again.headers["x-tessera-cache"] == "memory")
            let summary = try Self.summary(answer)
            #expect(summary == (try Self.expected(server.service, preset: "box", path: "sub/tall.jpg", format: "jpeg")))
            let decoded = try Self.expected(for: image.body, format: "jpeg")
            #expect(summary.width == decoded.width && summary.height == decoded.height, "the size of the image served")
            #expect(summary.width == 75 && summary.height == 100, "box is 100×100 fit: a 300×400 source becomes 75×100")
            let hash = try ThumbHash(base64: summary.thumbHash)
            #expect(abs(hash.approximateAspectRatio - 0.75) < 0.1)
        }
    }

    @Test("the format follows Accept, as the image's does", arguments: [("image/webp,*/*", "webp"), ("image/png", "png")])
    func formatFollowsAccept(accept: String, format: String) async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, server in
            let info = try await RawHTTP.get(port: port, "/v1/thumb/logo.png?info", headers: ["Accept": accept])
            let image = try await RawHTTP.get(port: port, "/v1/thumb/logo.png", headers: ["Accept": accept])
            #expect(image.headers["content-type"] == "image/" + format)
            #expect(try Self.summary(info) == (try Self.expected(server.service, preset: "thumb", path: "logo.png", format: format)))
        }
    }

    @Test("a resize's summary is that of its decoded answer (no table holds its pixels)")
    func resize() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let info = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120&info")
            let image = try await RawHTTP.get(port: port, "/v1/resize?src=photo.jpg&w=120")
            #expect(image.headers["content-type"] == "image/jpeg")
            let summary = try Self.summary(info)
            #expect(summary == (try Self.expected(for: image.body, format: "jpeg")))
            #expect(summary.width == 120 && summary.height == 90)
        }
    }

    @Test("errors are the image's own: unknown preset, missing file, a path outside the root, an undecodable source")
    func errors() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration()) { port, _ in
            for (path, status, code) in [("/v1/nope/photo.jpg?info", 404, "unknown_preset"), ("/v1/thumb/missing.jpg?info", 404, "not_found"),
                                         ("/v1/thumb/link-out.jpg?info", 403, "path_outside_root"),
                                         ("/v1/thumb/broken.jpg?info", 415, "undecodable_source")] {
                let answer = try await RawHTTP.get(port: port, path)
                #expect(answer.status == status, "\(path): \(answer.text)")
                #expect(answer.text.contains(code), "\(path): \(answer.text)")
            }
        }
    }

    @Test("with presets only, ?info is still answered (it is not a processing option)")
    func presetsOnly() async throws {
        let fixture = try ServeFixture()
        try await fixture.withServer(fixture.configuration { $0.onlyPresets = true }) { port, _ in
            let info = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?info")
            #expect(info.status == 200, "\(info.text)")
            #expect(try Self.summary(info).width == 64)
            let option = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?w=10")
            #expect(option.status == 400)
        }
    }
}
