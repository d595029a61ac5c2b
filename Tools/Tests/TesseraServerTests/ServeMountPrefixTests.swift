import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import Tessera
import TesseraServer
import TesseraTestSupport

/// `ImageRoutes.add(to:prefix:)` and `GalleryRoutes.add(to:prefix:)`: Tessera's routes under `/images` in
/// an application's own router, in process (HummingbirdTesting's router client).
@Suite("tessera's routes mounted under a prefix")
struct ServeMountPrefixTests {
    /// A response as the tests read it.
    struct Answer {
        let status: Int
        let headers: HTTPFields
        let body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Runs `body` with a client of an application whose router has the app's own `/` route and
    /// Tessera's routes (and gallery) under `prefix`.
    static func withMounted(_ configuration: ServerConfiguration, prefix: String,
                            _ body: @escaping @Sendable (@escaping @Sendable (String) async throws -> Answer) async throws -> Void) async throws {
        var logger = Logger(label: "mounted")
        logger.logLevel = .critical
        let service = try ImageService(configuration: configuration)
        let router = Router()
        router.get("/") { _, _ in "the app's own page" }
        ImageRoutes(service: service, logger: logger).add(to: router, prefix: prefix)
        GalleryRoutes(service: service, logger: logger).add(to: router, prefix: prefix)
        try await Application(router: router).test(.router) { client in
            try await body { target in
                try await client.execute(uri: target, method: .get) { response in
                    Answer(status: Int(response.status.code), headers: response.headers, body: Array(response.body.readableBytesView))
                }
            }
        }
        await service.shutdown()
    }

    @Test func presetsResizesAndHealthAnswerUnderThePrefixOnly() async throws {
        let fixture = try ServeFixture()
        try await Self.withMounted(fixture.configuration(), prefix: "/images") { get in
            let thumb = try await get("/images/v1/thumb/photo.jpg")
            #expect(thumb.status == 200)
            #expect(try DecodedBody(thumb.body) == DecodedBody(format: "jpeg", width: 64, height: 64))
            let nested = try await get("/images/v1/box/sub/tall.jpg")
            #expect(try DecodedBody(nested.body) == DecodedBody(format: "jpeg", width: 75, height: 100))
            let resized = try await get("/images/v1/resize?src=photo.jpg&w=120&h=80&mode=fill")
            #expect(resized.status == 200)
            #expect(try DecodedBody(resized.body) == DecodedBody(format: "jpeg", width: 120, height: 80))
            #expect(try await get("/images/healthz").status == 200)
            // Tessera's errors under the prefix are its own; outside it the paths are not Tessera's.
            let unknown = try await get("/images/v1/nosuch/photo.jpg")
            #expect(unknown.status == 404 && unknown.text.contains("unknown_preset"))
            for target in ["/v1/thumb/photo.jpg", "/v1/resize?src=photo.jpg&w=120&h=80&mode=fill", "/healthz", "/gallery"] {
                let outside = try await get(target)
                #expect(outside.status == 404, "\(target)")
                #expect(!outside.text.contains("unknown_preset"), "\(target)")
            }
            #expect(try await get("/").text == "the app's own page")
            // The gallery: its page and its listing under the prefix (the page asks for both there).
            let page = try await get("/images/gallery")
            #expect(page.status == 200 && page.text.contains("tesseraGallery"))
            let listing = try await get("/images/gallery/list")
            #expect(listing.status == 200 && listing.text.contains("photo.jpg"))
        }
    }

    @Test func headAndTheImgproxyDialectAnswerUnderThePrefix() async throws {
        let fixture = try ServeFixture()
        let service = try ImageService(configuration: fixture.configuration { $0.imgproxy.prefix = "/imgproxy/" })
        let router = Router()   // no options: HEAD comes from ImageRoutes itself
        ImageRoutes(service: service).add(to: router, prefix: "/images")
        try await Application(router: router).test(.router) { client in
            let target = "/images/imgproxy/_/rs:fill:90:60/plain/local:///photo.jpg"
            let get = try await client.execute(uri: target, method: .get) { $0 }
            #expect(get.status == .ok)
            #expect(try DecodedBody(Array(get.body.readableBytesView)) == DecodedBody(format: "jpeg", width: 90, height: 60))
            let head = try await client.execute(uri: "/images/v1/thumb/photo.jpg", method: .head) { $0 }
            #expect(head.status == .ok && head.body.readableBytes == 0)
            #expect(head.headers[.contentLength].flatMap { Int($0) } ?? 0 > 0)
            #expect(try await client.execute(uri: "/images/imgproxy/health", method: .get) { $0.status } == .ok)
        }
        await service.shutdown()
    }

    @Test func aPrefixIsNormalisedAndTheRootPrefixIsTheRoot() async throws {
        let fixture = try ServeFixture()
        try await Self.withMounted(fixture.configuration(), prefix: "images/") { get in
            let thumb = try await get("/images/v1/thumb/photo.jpg")
            #expect(thumb.status == 200)
        }
        try await Self.withMounted(fixture.configuration { $0.tablesDirectory = fixture.tables.path + "2" }, prefix: "/") { get in
            let thumb = try await get("/v1/thumb/photo.jpg")
            #expect(thumb.status == 200)
        }
    }

    @Test func signaturesCoverThePathAfterThePrefix() async throws {
        let fixture = try ServeFixture()
        let key = ServerConfiguration.SigningKey(id: "k1", secret: "mounted secret")
        try await Self.withMounted(fixture.configuration { $0.signingKeys = [key] }, prefix: "/images") { get in
            let signature = URLSigner.signature(path: "/v1/thumb/photo.jpg", rawQuery: nil, secret: key.secret)
            let signed = try await get("/images/v1/thumb/photo.jpg?s=\(signature)")
            #expect(signed.status == 200)
            #expect(try DecodedBody(signed.body) == DecodedBody(format: "jpeg", width: 64, height: 64))
            let query = "src=photo.jpg&w=40&h=30"
            let resize = URLSigner.signature(path: "/v1/resize", rawQuery: query, secret: key.secret)
            #expect(try await get("/images/v1/resize?\(query)&s=\(resize)").status == 200)
            #expect(try await get("/images/v1/thumb/photo.jpg").status == 403)
        }
    }

    @Test func dialectsAnswerUnderThePrefix() async throws {
        let fixture = try ServeFixture()
        let configuration = fixture.configuration {
            $0.thumbor.prefix = "/thumbor/"
            $0.thumbor.allowUnsafe = true
        }
        try await Self.withMounted(configuration, prefix: "/images") { get in
            let thumbor = try await get("/images/thumbor/unsafe/100x50/photo.jpg")
            #expect(thumbor.status == 200)
            #expect(try DecodedBody(thumbor.body) == DecodedBody(format: "jpeg", width: 100, height: 50))
            #expect(try await get("/images/thumbor/healthcheck").status == 200)
            #expect(try await get("/thumbor/unsafe/100x50/photo.jpg").status == 404)
        }
    }
}
