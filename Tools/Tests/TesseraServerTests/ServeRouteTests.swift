import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import Tessera
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
            for target in ["/v1/resize?src=photo.jpg&w=50&crop=10:10", "/v1/thumb/photo.jpg?metadata=keep",
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
