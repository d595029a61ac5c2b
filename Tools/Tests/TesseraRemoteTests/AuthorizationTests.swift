import Foundation
import Synchronization
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraHTTP
import TesseraTestSupport

/// A `RequestAuthorizing` hook for the tests: sends `token`, and on a refresh after `401` takes a new
/// one from `refresh` (the origin's credential standing in for an identity service). Records each call.
actor TestAuthorizer: RequestAuthorizing {
    private var token: String
    private let refresh: @Sendable () -> String
    private(set) var attempts: [AuthorizationAttempt] = []

    init(token: String, refresh: @escaping @Sendable () -> String) {
        self.token = token
        self.refresh = refresh
    }

    func authorize(_ request: inout LoadRequest, attempt: AuthorizationAttempt) async throws {
        attempts.append(attempt)
        if attempt == .afterUnauthorized { token = refresh() }
        request.headers["Authorization"] = token
    }
}

@Suite("Request headers and authorization against the test origin")
struct AuthorizationTests {
    /// A manager over the shared loader with a disk cache, the given manager headers and hook.
    func manager(headers: [String: String] = [:], authorizer: (any RequestAuthorizing)? = nil) throws -> ImageManager {
        let configuration = ImageManager.Configuration(disk: DiskCache.Configuration(directory: try temporaryDirectory("auth")),
                                                       diskSweepInterval: nil, headers: headers)
        return try ImageManager(configuration: configuration, loader: HTTPDataLoader.shared, authorizer: authorizer)
    }

    @Test("the manager's headers reach the origin; a request's own header overrides one of the same name")
    func managerAndRequestHeaders() async throws {
        try await Origin.with { origin in
            let credential = OriginCredential(accepting: "Bearer manager")
            origin.set("/private.png", .init(body: try pngBytes(), credential: credential))
            let manager = try manager(headers: ["Authorization": "Bearer manager"])
            let url = origin.url("/private.png")
            _ = try await manager.image(for: url)
            #expect(origin.arrivals.map(\.authorization) == ["Bearer manager"])

            credential.rotate(to: "Bearer request")
            // Lower-case name: header names compare case-insensitively, the request's replaces the manager's.
            _ = try await manager.image(for: ImageRequest(url: url, headers: ["authorization": "Bearer request"]))
            #expect(origin.arrivals.map(\.authorization) == ["Bearer manager", "Bearer request"])
        }
    }

    @Test("without an authorizer a 401 is an HTTP status error after one request")
    func unauthorizedWithoutHook() async throws {
        try await Origin.with { origin in
            origin.set("/locked.png", .init(body: try pngBytes(), credential: OriginCredential(accepting: "Bearer x")))
            let manager = try manager()
            let url = origin.url("/locked.png")
            await #expect(throws: TesseraError(.fetching(.httpStatus(code: 401, url: url.absoluteString)))) {
                _ = try await manager.image(for: url)
            }
            #expect(origin.count("/locked.png") == 1)
        }
    }

    @Test("the hook adds a token before the request")
    func hookAddsToken() async throws {
        try await Origin.with { origin in
            origin.set("/hooked.png", .init(body: try pngBytes(), credential: OriginCredential(accepting: "Bearer t1")))
            let hook = TestAuthorizer(token: "Bearer t1", refresh: { "Bearer never" })
            let manager = try manager(authorizer: hook)
            let image = try await manager.image(for: origin.url("/hooked.png"))
            #expect(image.width == 64)
            #expect(origin.arrivals.map(\.authorization) == ["Bearer t1"])
            #expect(await hook.attempts == [.initial])
        }
    }

    @Test("401 → the hook refreshes → the request is retried once and succeeds; again after the token rotates")
    func refreshAfterUnauthorized() async throws {
        try await Origin.with { origin in
            let credential = OriginCredential(accepting: "Bearer t2")
            origin.set("/rotating.png", .init(body: try pngBytes(), credential: credential))
            let hook = TestAuthorizer(token: "Bearer t1", refresh: { credential.accepted ?? "" })
            let manager = try manager(authorizer: hook)
            let url = origin.url("/rotating.png")
            _ = try await manager.image(for: url)
            #expect(origin.arrivals.map(\.authorization) == ["Bearer t1", "Bearer t2"])
            #expect(await hook.attempts == [.initial, .afterUnauthorized])

            credential.rotate(to: "Bearer t3")   // the token expires at the origin
            _ = try await manager.image(for: ImageRequest(url: url, cachePolicy: .reloadIgnoringCache))
            #expect(origin.arrivals.map(\.authorization) == ["Bearer t1", "Bearer t2", "Bearer t2", "Bearer t3"])
            #expect(await hook.attempts == [.initial, .afterUnauthorized, .initial, .afterUnauthorized])
            #expect(manager.statistics.downloads == 4)
        }
    }

    @Test("a wrong token twice is FetchFailure.unauthorized after exactly 2 requests")
    func wrongTokenTwice() async throws {
        try await Origin.with { origin in
            origin.set("/denied.png", .init(body: try pngBytes(), credential: OriginCredential(accepting: "Bearer right")))
            let hook = TestAuthorizer(token: "Bearer wrong", refresh: { "Bearer still-wrong" })
            let manager = try manager(authorizer: hook)
            let url = origin.url("/denied.png")
            await #expect(throws: TesseraError(.fetching(.unauthorized(url: url.absoluteString)))) {
                _ = try await manager.image(for: url)
            }
            #expect(origin.count("/denied.png") == 2)
            #expect(origin.arrivals.map(\.authorization) == ["Bearer wrong", "Bearer still-wrong"])
            #expect(manager.isCachedOnDisk(url) == false)
        }
    }

    @Test("requests with their own Authorization never share a response; a public one is stored for everyone")
    func credentialsAndCaching() async throws {
        try await Origin.with { origin in
            origin.set("/per-user.png", .init(body: try pngBytes(), cacheControl: "max-age=600"))
            origin.set("/shared.png", .init(body: try pngBytes(), cacheControl: "public, max-age=600"))
            let manager = try manager()
            let perUser = origin.url("/per-user.png")
            _ = try await manager.image(for: ImageRequest(url: perUser, headers: ["Authorization": "Bearer ann"]))
            _ = try await manager.image(for: ImageRequest(url: perUser, headers: ["Authorization": "Bearer bob"]))
            // Each went to the origin with its own credentials, and nothing was kept for the other.
            #expect(origin.arrivals.map(\.authorization) == ["Bearer ann", "Bearer bob"])
            #expect(manager.isCachedOnDisk(perUser) == false)
            #expect(manager.cachedImage(for: perUser) == nil)
            // A request without credentials is cached as usual, and still not served to a credentialed one.
            _ = try await manager.image(for: perUser)
            _ = try await manager.image(for: ImageRequest(url: perUser, headers: ["Cookie": "session=ann"]))
            #expect(origin.count("/per-user.png") == 4)
            _ = try await manager.image(for: perUser)
            #expect(origin.count("/per-user.png") == 4, "the shared copy serves requests without credentials")

            let shared = origin.url("/shared.png")
            _ = try await manager.image(for: ImageRequest(url: shared, headers: ["Authorization": "Bearer ann"]))
            #expect(manager.isCachedOnDisk(shared))
            _ = try await manager.image(for: shared)
            #expect(origin.count("/shared.png") == 1, "a public response is shared")
        }
    }
}
