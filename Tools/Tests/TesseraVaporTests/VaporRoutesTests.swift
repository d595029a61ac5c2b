import Foundation
import Logging
import Testing
import Tessera
import TesseraServer
import TesseraTestSupport
import TesseraVapor
import Vapor

/// `TesseraVapor`: the image routes in a real Vapor 4 application, in process, listening on 127.0.0.1 and
/// asked over a socket; the application's own routes beside them; the service shut down with it.
@Suite("tessera's routes in a Vapor application")
struct VaporRoutesTests {
    /// Runs `body` with the port of a Vapor application that answers `GET /` itself and Tessera's routes
    /// (``ImageRoutes/mount(in:prefix:)``) under `prefix`, then shuts the application down.
    static func withApplication(_ service: ImageService, prefix: String,
                                _ body: (Int) async throws -> Void) async throws {
        var logger = Logger(label: "vapor")
        logger.logLevel = .critical
        let app = try await Application.make(.testing, .singleton, logger: logger)
        app.get { _ in "the app's own page" }
        ImageRoutes(service: service, logger: logger).mount(in: app, prefix: prefix)
        do {
            try await app.asyncBoot()
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            let port = try #require(app.http.server.shared.localAddress?.port)
            try await body(port)
        } catch {
            await app.server.shutdown()
            try await app.asyncShutdown()
            throw error
        }
        await app.server.shutdown()
        try await app.asyncShutdown()
    }

    @Test func presetsResizesHeadAndRevalidationAnswerThroughVapor() async throws {
        let fixture = try ServeFixture()
        let service = try ImageService(configuration: fixture.configuration())
        try await Self.withApplication(service, prefix: "/images") { port in
            let thumb = try await RawHTTP.get(port: port, "/images/v1/thumb/photo.jpg")
            #expect(thumb.status == 200)
            #expect(thumb.headers["content-type"] == "image/jpeg")
            #expect(try DecodedBody(thumb.body) == DecodedBody(format: "jpeg", width: 64, height: 64))
            #expect(thumb.headers["content-length"] == String(thumb.body.count))
            // The second time from the service's memory, through the same routes.
            let again = try await RawHTTP.get(port: port, "/images/v1/thumb/photo.jpg")
            #expect(again.headers["x-tessera-cache"] == "memory")
            #expect(again.body == thumb.body)

            let resized = try await RawHTTP.get(port: port, "/images/v1/resize?src=photo.jpg&w=120&h=80&mode=fill&fmt=png")
            #expect(resized.status == 200)
            #expect(try DecodedBody(resized.body) == DecodedBody(format: "png", width: 120, height: 80))

            // HEAD: Vapor takes the GET route and writes its headers only.
            let head = try await RawHTTP.head(port: port, "/images/v1/thumb/photo.jpg")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head.headers["content-length"] == String(thumb.body.count))

            // A validator the browser kept: 304 with the ETag and no body.
            let etag = try #require(thumb.headers["etag"])
            let revalidated = try await RawHTTP.get(port: port, "/images/v1/thumb/photo.jpg", headers: ["If-None-Match": etag])
            #expect(revalidated.status == 304 && revalidated.body.isEmpty)
            #expect(revalidated.headers["etag"] == etag)

            // Tessera's errors are its own, under the prefix; the app's routes are the app's.
            let unknown = try await RawHTTP.get(port: port, "/images/v1/nosuch/photo.jpg")
            #expect(unknown.status == 404 && unknown.text.contains("unknown_preset"))
            let bad = try await RawHTTP.get(port: port, "/images/v1/resize?src=photo.jpg&w=120&bogus=1")
            #expect(bad.status == 400 && bad.text.contains("unknown_parameter"))
            #expect(try await RawHTTP.get(port: port, "/images/healthz").text == "{\"status\":\"ok\"}")
            #expect(try await RawHTTP.get(port: port, "/").text == "the app's own page")
            #expect(try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg").status == 404)
        }
        #expect(service.statistics.decodes == 2)   // the thumbnail and the resize, each once
        #expect(service.statistics.shutdowns == 1)  // shut down with the application
    }

    @Test func signedURLsAndPurgeAnswerThroughVapor() async throws {
        let fixture = try ServeFixture()
        let key = ServerConfiguration.SigningKey(id: "k1", secret: "vapor secret")
        let service = try ImageService(configuration: fixture.configuration {
            $0.signingKeys = [key]
            $0.adminKey = "admin key"
        })
        try await Self.withApplication(service, prefix: "") { port in
            let signature = URLSigner.signature(path: "/v1/thumb/photo.jpg", rawQuery: nil, secret: key.secret)
            let signed = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?s=\(signature)")
            #expect(signed.status == 200)
            #expect(try DecodedBody(signed.body) == DecodedBody(format: "jpeg", width: 64, height: 64))
            #expect(try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg").status == 403)
            // POST /admin/purge: 401 without the key, 204 with it, and the next request makes the image again.
            #expect(try await RawHTTP.post(port: port, "/admin/purge?src=photo.jpg", body: []).status == 401)
            let purged = try await RawHTTP.post(port: port, "/admin/purge?src=photo.jpg", body: [],
                                                headers: ["Authorization": "Bearer admin key"])
            #expect(purged.status == 204 && purged.headers["content-length"] == nil)
            let remade = try await RawHTTP.get(port: port, "/v1/thumb/photo.jpg?s=\(signature)")
            #expect(remade.status == 200 && remade.headers["x-tessera-cache"] != "memory")
        }
        #expect(service.statistics.shutdowns == 1)
    }
}
