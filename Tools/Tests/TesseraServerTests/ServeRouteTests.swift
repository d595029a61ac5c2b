import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
@_spi(Internal) import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// The routes of `tessera serve` (``ImageServer/router()``) in process, through HummingbirdTesting's router
/// test client: what a request is answered with, without a socket. What the connection does (the memory-hit
/// handler, pipelining, timeouts, limits) is tested over sockets (`MemoryHitHandlerTests`, `ServeTests`,
/// the end-to-end suites).
@Suite("tessera serve's routes, in process")
struct ServeRouteTests {
    /// A response as the tests read it.
    struct Answer {
        let status: Int
        let headers: HTTPFields
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Runs `body` with a client of `configuration`'s server's router.
    static func withRouter(_ configuration: ServerConfiguration,
                           _ body: @escaping @Sendable (Client) async throws -> Void) async throws {
        let server = try ImageServer(configuration: configuration, logger: Logger(label: "test"))
        let app = Application(router: server.router())
        try await app.test(.router) { client in try await body(Client(client: client)) }
        await server.service.shutdown()
    }

    /// The test client, answering with ``Answer``s.
    struct Client: Sendable {
        let client: any TestClientProtocol

        func get(_ target: String, headers: HTTPFields = [:]) async throws -> Answer { try await execute(target, .get, headers) }
        func head(_ target: String) async throws -> Answer { try await execute(target, .head, [:]) }

        private func execute(_ target: String, _ method: HTTPRequest.Method, _ headers: HTTPFields) async throws -> Answer {
            try await client.execute(uri: target, method: method, headers: headers) { response in
                Answer(status: Int(response.status.code), headers: response.headers, body: Array(response.body.readableBytesView))
            }
        }
    }

    @Test func headAnswersLikeGetWithoutABody() async throws {
        let fixture = try ServeFixture()
        try await Self.withRouter(fixture.configuration()) { client in
            for target in ["/v1/thumb/photo.jpg", "/healthz", "/v1/nosuch/photo.jpg"] {
                let get = try await client.get(target)
                let head = try await client.head(target)
                #expect(head.status == get.status, "\(target)")
                #expect(head.body.isEmpty, "\(target)")
                #expect(head.headers[.contentLength] == String(get.body.count), "\(target)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "\(target)")
                #expect(head.headers[.eTag] == get.headers[.eTag], "\(target)")
            }
        }
    }

    @Test func errorsAreShortJSONWithTheirStatus() async throws {
        let fixture = try ServeFixture()
        try await Self.withRouter(fixture.configuration()) { client in
            for (target, status) in [("/v1/nope/photo.jpg", 404), ("/v1/thumb/missing.jpg", 404), ("/elsewhere", 404),
                                     ("/v1/thumb", 404), ("/v1/thumb/sub", 404), ("/v1/thumb/broken.jpg", 415),
                                     ("/v1/resize?src=http://127.0.0.1/x.jpg&w=5&h=5", 403)] {
                let response = try await client.get(target)
                #expect(response.status == status, "\(target)")
                #expect(response.headers[.contentType] == "application/json", "\(target)")
                let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String]
                #expect(object?["error"]?.isEmpty == false, "\(target)")
                #expect(response.body.count < 300)
            }
            #expect(try await client.get("/v1/thumb/photo.jpg").status == 200)
        }
    }

    /// An option the route does not take is refused, never ignored (it would be a silently different image);
    /// the signature's `s` and the cache-buster `cb` are taken.
    @Test func unknownParametersAreRefused() async throws {
        let fixture = try ServeFixture()
        try await Self.withRouter(fixture.configuration()) { client in
            for target in ["/v1/resize?src=photo.jpg&w=50&frobnicate=1", "/v1/thumb/photo.jpg?metadata=keep",
                           "/v1/resize?src=photo.jpg&w=50&widht=40", "/v1/thumb/photo.jpg?w=10"] {
                let response = try await client.get(target)
                #expect(response.status == 400, "\(target)")
                #expect(response.text.contains("\"unknown_parameter\""), "\(target): \(response.text)")
            }
            #expect(try await client.get("/v1/thumb/photo.jpg?cb=2026-11").status == 200)
            #expect(try await client.get("/v1/resize?src=photo.jpg&w=50&h=40&mode=fill&gravity=north&fmt=png&q=80&cb=1").status == 200)
        }
    }

    /// `rotate` and `flip` on `/v1/resize`: a quarter turn swaps the sides of the answer; a bad value is
    /// `400` with the parameter's own code; each is part of the cache key (a different ETag).
    @Test func rotateAndFlipAreResizeOptions() async throws {
        let fixture = try ServeFixture()
        try await Self.withRouter(fixture.configuration()) { client in
            let plain = try await client.get("/v1/resize?src=photo.jpg&w=40&h=20&mode=force&fmt=png")
            let turned = try await client.get("/v1/resize?src=photo.jpg&w=40&h=20&mode=force&fmt=png&rotate=90")
            let flipped = try await client.get("/v1/resize?src=photo.jpg&w=40&h=20&mode=force&fmt=png&flip=h")
            for answer in [plain, turned, flipped] { #expect(answer.status == 200, "\(answer.text.prefix(200))") }
            let size = { (answer: Answer) throws -> PixelSize in
                let image = try ImageDecoder().decode(Data(answer.body))
                return PixelSize(width: image.width, height: image.height)
            }
            #expect(try size(plain) == PixelSize(width: 40, height: 20))
            #expect(try size(turned) == PixelSize(width: 20, height: 40))
            #expect(try size(flipped) == PixelSize(width: 40, height: 20))
            #expect(Set([plain, turned, flipped].compactMap { $0.headers[.eTag] }).count == 3)
            for (target, code) in [("/v1/resize?src=photo.jpg&w=40&rotate=45", "bad_rotate"), ("/v1/resize?src=photo.jpg&w=40&flip=x", "bad_flip")] {
                let refused = try await client.get(target)
                #expect(refused.status == 400 && refused.text.contains("\"\(code)\""), "\(target): \(refused.text)")
            }
        }
    }

    /// The operations on `/v1/resize`, on the 200×100 quadrants (red, green / blue, white): each answers the
    /// size and the colours its arithmetic gives, with no `w` or `h` (the source's own size); a bad value is
    /// `400` with the parameter's code; each operation is part of the cache key.
    @Test func operationsAreResizeOptions() async throws {
        let fixture = try ServeFixture()
        try Data(try Quadrants.png()).write(to: fixture.root.appendingPathComponent("quadrants.png"))
        try await Self.withRouter(fixture.configuration()) { client in
            func image(_ query: String) async throws -> Bitmap {
                let answer = try await client.get("/v1/resize?src=quadrants.png&fmt=png&" + query)
                #expect(answer.status == 200, "\(query): \(answer.text.prefix(200))")
                return try ImageDecoder().decode(Data(answer.body))
            }
            let whole = try await image("rotate=90")
            #expect(whole.width == 100 && whole.height == 200, "no size: the source's, turned")
            let corner = try await image("crop=100:50&crop_gravity=south-east")
            #expect(corner.width == 100 && corner.height == 50 && Quadrants.close(corner.pixel(x: 50, y: 25), Quadrants.white))
            let box = try await image("crop_box=0,50,100,100&w=50")
            #expect(box.width == 50 && box.height == 25 && Quadrants.close(box.pixel(x: 25, y: 12), Quadrants.blue))
            let padded = try await image("w=20&padding=5,10&bg=000000")
            #expect(padded.width == 40 && padded.height == 20 && Quadrants.close(padded.pixel(x: 2, y: 2), [0, 0, 0, 255]))
            #expect(Quadrants.close(padded.pixel(x: 11, y: 6), Quadrants.red))
            let grey = try await image("crop=100:50&crop_gravity=north-west&grayscale=1")
            #expect(Quadrants.close(grey.pixel(x: 50, y: 25), [54, 54, 54, 255]), "red's Rec. 709 luma: \(grey.pixel(x: 50, y: 25))")
            let blocks = try await image("pixelate=200")
            #expect(Quadrants.close(blocks.pixel(x: 0, y: 0), [128, 128, 128, 255]), "the mean of the four: \(blocks.pixel(x: 0, y: 0))")
            _ = try await image("trim=0&sharpen=0.5")
            var tags: Set<String> = []
            for query in ["w=50", "w=50&crop=10:10", "w=50&crop_box=0,0,10,10", "w=50&trim=1", "w=50&padding=1",
                          "w=50&sharpen=1", "w=50&pixelate=2", "w=50&grayscale=1"] {
                tags.insert(try await client.get("/v1/resize?src=quadrants.png&" + query).headers[.eTag] ?? "")
            }
            #expect(tags.count == 8, "every operation is part of the cache key")
            for (query, code) in [("crop=10", "bad_crop"), ("crop=10:10&crop_gravity=up", "bad_crop"), ("crop_gravity=north", "bad_crop"),
                                  ("crop_box=1,2,3", "bad_crop"), ("crop_box=500,0,600,10", "bad_crop"), ("crop=5:5&crop_box=0,0,1,1", "bad_crop"),
                                  ("trim=256", "bad_trim"), ("padding=1,2,3,4,5", "bad_padding"), ("padding=-1", "bad_padding"),
                                  ("sharpen=11", "bad_sharpen"), ("pixelate=0", "bad_pixelate"), ("grayscale=yes", "bad_grayscale"),
                                  ("w=2000&h=2000&mode=force&enlarge=1&padding=100", "output_too_large")] {
                let refused = try await client.get("/v1/resize?src=quadrants.png&" + query)
                #expect(refused.status == 400 && refused.text.contains("\"\(code)\""), "\(query): \(refused.text)")
            }
        }
    }

    /// Watermarks by name (`--watermark NAME=FILE`): drawn where the query or a preset's recipe asks; an
    /// unknown name or a stray `watermark_…` is `400 bad_watermark`; a preset naming an unconfigured one
    /// stops the start; new pixels under the same name answer with a new ETag.
    @Test func watermarksByName() async throws {
        let fixture = try ServeFixture()
        try Data(try Quadrants.png()).write(to: fixture.root.appendingPathComponent("quadrants.png"))
        let black = Bitmap(width: 10, height: 10, style: .bgra32) { view in
            for y in 0..<10 { for x in 0..<10 { (view.row(y) + x * 4).storeBytes(of: 0xFF00_0000 as UInt32, as: UInt32.self) } }
        }
        let markFile = fixture.root.deletingLastPathComponent().appendingPathComponent("mark-\(UUID().uuidString).png")
        try Data(try PNGEncoder().encode(black)).write(to: markFile)
        defer { try? FileManager.default.removeItem(at: markFile) }
        let configuration = fixture.configuration { configuration in
            configuration.watermarks = [.init(name: "logo", file: markFile.path)]
            var marked = ServerConfiguration.Preset(name: "marked", width: 200, height: 100, mode: .fit)
            marked.processing.watermark = .init(name: "logo", position: .gravity(.northEast))
            configuration.presets.append(marked)
        }
        let firstTag = LockedValue<String?>(nil)
        try await Self.withRouter(configuration) { client in
            let answer = try await client.get("/v1/resize?src=quadrants.png&fmt=png&watermark=logo&watermark_position=north-west")
            #expect(answer.status == 200, "\(answer.text.prefix(200))")
            let image = try ImageDecoder().decode(Data(answer.body))
            #expect(Quadrants.close(image.pixel(x: 2, y: 2), [0, 0, 0, 255]) && Quadrants.close(image.pixel(x: 12, y: 2), Quadrants.red))
            firstTag.withLock { $0 = answer.headers[.eTag] }
            let preset = try ImageDecoder().decode(Data(try await client.get("/v1/marked/quadrants.png?fmt=png").body))
            #expect(Quadrants.close(preset.pixel(x: 195, y: 2), [0, 0, 0, 255]) && Quadrants.close(preset.pixel(x: 185, y: 2), Quadrants.green))
            for query in ["watermark=nope", "watermark_opacity=0.5", "watermark=logo&watermark_position=up", "watermark=logo&watermark_scale=2",
                          "watermark=logo&watermark_offset=1"] {
                let refused = try await client.get("/v1/resize?src=quadrants.png&" + query)
                #expect(refused.status == 400 && refused.text.contains("\"bad_watermark\""), "\(query): \(refused.text)")
            }
        }
        // New pixels under the same name: another identity, so another ETag.
        try Data(try Quadrants.png()).write(to: markFile)
        try await Self.withRouter(configuration) { client in
            let answer = try await client.get("/v1/resize?src=quadrants.png&fmt=png&watermark=logo&watermark_position=north-west")
            #expect(answer.status == 200 && answer.headers[.eTag] != firstTag.withLock { $0 })
        }
        var unconfigured = configuration
        unconfigured.watermarks = []
        #expect(throws: ServerConfigurationError.self) { _ = try ImageServer(configuration: unconfigured, logger: Logger(label: "test")) }
    }

    /// `filename` and `attachment` give `Content-Disposition` with the served format's extension, the name
    /// sanitised; `Last-Modified` is the file's modification time and `If-Modified-Since` is answered `304`
    /// when the file is not newer (but `If-None-Match`, when given, decides).
    @Test func dispositionAndLastModified() async throws {
        let fixture = try ServeFixture()
        try await Self.withRouter(fixture.configuration()) { client in
            let cases: [(String, String?)] = [
                ("/v1/thumb/photo.jpg?filename=holiday", "inline; filename=\"holiday.jpg\""),
                ("/v1/thumb/photo.jpg?filename=a%22b%2Fc.webp&attachment=1", "attachment; filename=\"a_b_c.jpg\""),
                ("/v1/resize?src=photo.jpg&w=20&fmt=png&filename=%C3%A9t%C3%A9", "inline; filename=\"_t_.png\""),
                ("/v1/thumb/photo.jpg?attachment=1", "attachment"),
                ("/v1/thumb/photo.jpg", nil),
            ]
            for (target, expected) in cases {
                let answer = try await client.get(target)
                #expect(answer.status == 200, "\(target): \(answer.text.prefix(200))")
                #expect(answer.headers[.contentDisposition] == expected, "\(target)")
            }
            for (target, code) in [("/v1/thumb/photo.jpg?filename=%2F%2F", "bad_filename"), ("/v1/thumb/photo.jpg?attachment=yes", "bad_attachment")] {
                let refused = try await client.get(target)
                #expect(refused.status == 400 && refused.text.contains("\"\(code)\""), "\(target): \(refused.text)")
            }
            let answer = try await client.get("/v1/resize?src=photo.jpg&w=30")
            let modified = try #require(answer.headers[.lastModified])
            let file = fixture.root.appendingPathComponent("photo.jpg").path
            let seconds = try #require(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date).timeIntervalSince1970
            #expect(HTTPCacheInfo.parseHTTPDate(modified)?.timeIntervalSince1970 == seconds.rounded(.down))
            for target in ["/v1/resize?src=photo.jpg&w=30", "/v1/resize?src=photo.jpg&w=31"] {   // from memory, then made
                let notModified = try await client.get(target, headers: [.ifModifiedSince: modified])
                #expect(notModified.status == 304 && notModified.body.isEmpty, "\(target)")
                #expect(notModified.headers[.lastModified] == modified, "\(target)")
            }
            let older = try await client.get("/v1/resize?src=photo.jpg&w=30", headers: [.ifModifiedSince: "Mon, 01 Jan 1990 00:00:00 GMT"])
            #expect(older.status == 200)
            let tagDecides = try await client.get("/v1/resize?src=photo.jpg&w=30", headers: [.ifModifiedSince: modified, .ifNoneMatch: "\"other\""])
            #expect(tagDecides.status == 200, "If-None-Match, when given, decides alone")
        }
    }

    @Test func pathEscapesAreRefusedInEveryEncoding() async throws {
        let fixture = try ServeFixture()
        let secretName = fixture.secret.lastPathComponent
        let secretPath = fixture.secret.path
        try await Self.withRouter(fixture.configuration()) { client in
            let targets = [
                "/v1/thumb/../\(secretName)", "/v1/thumb/sub/../../\(secretName)",
                "/v1/thumb/%2e%2e/\(secretName)", "/v1/thumb/%2E%2E%2F\(secretName)", "/v1/thumb/sub%2f..%2f..%2f\(secretName)",
                "/v1/thumb/%252e%252e%252f\(secretName)", "/v1/thumb/..%5c\(secretName)",
                "/v1/thumb/\(secretPath)", "/v1/thumb/%2F\(secretPath.dropFirst())", "/v1/thumb/%2fetc%2fpasswd",
                "/v1/thumb/photo.jpg%00.png", "/v1/thumb/photo.jpg%00", "/v1/thumb/./photo.jpg", "/v1/thumb/sub//tall.jpg",
                "/v1/thumb/link-out.jpg", "/v1/thumb/dir-out/\(secretName)", "/v1/thumb/dir-out%2F\(secretName)",
                "/v1/resize?src=../\(secretName)&w=50&h=50", "/v1/resize?src=%2e%2e%2f\(secretName)&w=50&h=50",
                "/v1/resize?src=%252e%252e%252f\(secretName)&w=50&h=50", "/v1/resize?src=\(secretPath)&w=50&h=50",
                "/v1/resize?src=%2F\(secretPath.dropFirst())&w=50&h=50", "/v1/resize?src=photo.jpg%00&w=50&h=50",
                "/v1/resize?src=link-out.jpg&w=50&h=50", "/v1/resize?src=dir-out/\(secretName)&w=50&h=50",
                "/v1/resize?src=file:///\(secretPath)&w=50&h=50",
            ]
            for target in targets {
                let response = try await client.get(target)
                #expect((400..<500).contains(response.status), "\(target) → \(response.status)")
                #expect(response.headers[.contentType] == "application/json", "\(target)")
                #expect(response.text.contains("\"error\""), "\(target)")
                #expect(!response.text.contains("secret"), "\(target)")
            }
        }
    }

    @Test func signaturesAreCheckedAndRetiredKeysRefused() async throws {
        let fixture = try ServeFixture()
        let current = ServerConfiguration.SigningKey(id: "2026-11", secret: "new secret")
        let previous = ServerConfiguration.SigningKey(id: "2026-10", secret: "old secret")
        @Sendable func signed(_ path: String, _ query: String?, _ key: ServerConfiguration.SigningKey) -> String {
            let s = URLSigner.signature(path: path, rawQuery: query, secret: key.secret)
            return query.map { "\(path)?\($0)&s=\(s)" } ?? "\(path)?s=\(s)"
        }
        try await Self.withRouter(fixture.configuration { $0.signingKeys = [current, previous] }) { client in
            #expect(try await client.get(signed("/v1/thumb/photo.jpg", nil, current)).status == 200)
            #expect(try await client.get(signed("/v1/thumb/photo.jpg", nil, previous)).status == 200)
            #expect(try await client.get(signed("/v1/resize", "src=photo.jpg&w=40&h=30", current)).status == 200)
            let unsigned = try await client.get("/v1/thumb/photo.jpg")
            #expect(unsigned.status == 403 && unsigned.text.contains("missing_signature"))
            // Tampered: signed for w=40, sent with w=400.
            let tampered = signed("/v1/resize", "src=photo.jpg&w=40&h=30", current).replacingOccurrences(of: "w=40", with: "w=400")
            #expect(try await client.get(tampered).status == 403)
            let otherPath = signed("/v1/thumb/photo.jpg", nil, current).replacingOccurrences(of: "photo", with: "sub/tall")
            #expect(try await client.get(otherPath).status == 403)
            #expect(try await client.get("/v1/thumb/photo.jpg?s=not-base64!").status == 403)
            #expect(try await client.get("/healthz").status == 200)
        }
        // The previous key retired: its signatures no longer pass.
        try await Self.withRouter(fixture.configuration { $0.signingKeys = [current]; $0.tablesDirectory = fixture.tables.path + "2" }) { client in
            let retired = try await client.get(signed("/v1/thumb/photo.jpg", nil, previous))
            #expect(retired.status == 403 && retired.text.contains("bad_signature"))
            #expect(try await client.get(signed("/v1/thumb/photo.jpg", nil, current)).status == 200)
        }
    }
}
