import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import Testing
import Tessera
import TesseraHTTP
import TesseraServer
import TesseraTestSupport

/// `ImageService` and `HTTPDataLoader` as swift-service-lifecycle services: a `ServiceGroup` starts them,
/// and its graceful shutdown shuts them down, once.
@Suite("ImageService and HTTPDataLoader in a ServiceGroup")
struct ServiceLifecycleTests {
    static var quietLogger: Logger {
        var logger = Logger(label: "lifecycle")
        logger.logLevel = .critical
        return logger
    }

    /// A remote `/v1/resize` request for `src` on `service`.
    static func resize(_ service: ImageService, _ src: URL) -> ImageService.RequestInfo {
        ImageService.RequestInfo(route: .resize, path: "/v1/resize", rawQuery: "src=\(src.absoluteString)&w=40&h=40&mode=fill",
                                 accept: nil, ifNoneMatch: nil)
    }

    @Test func aGracefulShutdownOfTheGroupShutsTheServiceAndTheLoaderDownOnce() async throws {
        let fixture = try ServeFixture()
        let origin = try await Origin.start()
        let jpeg = Array(try ServeFixture.jpeg(width: 120, height: 90))
        origin.set("/before.jpg", .init(body: jpeg))
        origin.set("/after.jpg", .init(body: jpeg))
        let service = try ImageService(configuration: fixture.configuration {
            $0.remote.allowedHosts = ["127.0.0.1"]
            $0.remote.allowedAddressRanges = ["127.0.0.1/32"]
        })
        let loader = HTTPDataLoader()
        // The loader last: the group shuts it down first, then the service.
        let group = ServiceGroup(services: [service, loader], logger: Self.quietLogger)
        let running = Task { try await group.run() }

        // Both work while the group runs.
        let answer = try await service.respond(to: Self.resize(service, origin.url("/before.jpg")))
        #expect(try DecodedBody(answer.body) == DecodedBody(format: "jpeg", width: 40, height: 40))
        let loaded = try await loader.load(LoadRequest(url: origin.url("/before.jpg")), progress: { _ in })
        #expect(loaded.statusCode == 200 && Array(loaded.data) == jpeg)
        #expect(service.statistics.shutdowns == 0 && !loader.isShutdown)

        await group.triggerGracefulShutdown()
        try await running.value   // the group ends once both services' run() returned

        #expect(service.statistics.shutdowns == 1)
        #expect(loader.isShutdown)
        await #expect(throws: TesseraError.self) {
            _ = try await loader.load(LoadRequest(url: origin.url("/before.jpg")), progress: { _ in })
        }
        // The service's own remote loader is closed: a source it has not downloaded yet fails.
        await #expect(throws: ServiceError.self) {
            _ = try await service.respond(to: Self.resize(service, origin.url("/after.jpg")))
        }
        #expect(origin.count("/after.jpg") == 0)
        // shutdown() again, and concurrently: the work ran once.
        async let first: Void = service.shutdown()
        async let second: Void = service.shutdown()
        _ = await (first, second)
        try await loader.shutdown()
        #expect(service.statistics.shutdowns == 1)
        await origin.stop()
    }
}
