import Foundation
import Testing
@testable import TesseraImaging
import Tessera
import TesseraHTTP
import TesseraServer
import TesseraTestSupport

/// The SSRF guard's answer to DNS rebinding for plain `http` sources: the loader connects to the address
/// the guard checked, with the URL's host in `Host`, instead of resolving the name again. Loopback
/// only: `localhost` (resolved through /etc/hosts) and the origin on 127.0.0.1.
@Suite("HTTPDataLoader: connecting to the checked address")
struct AddressPinningTests {
    @Test("an http load goes to the address the check returned, with the URL's host as Host")
    func pinnedAddress() async throws {
        try await Origin.with { origin in
            origin.set("/pin.png", .init(body: try pngBytes()))
            let url = URL(string: "http://localhost:\(origin.port)/pin.png")!
            let pinned = HTTPDataLoader(configuration: .init(refusedHostCooldown: .zero), urlCheck: { _ in "127.0.0.1" })
            let response = try await pinned.load(LoadRequest(url: url), progress: { _ in })
            #expect(response.statusCode == 200)
            #expect(response.url == url)
            #expect(origin.arrivals.map(\.host) == ["localhost:\(origin.port)"])

            // Nothing listens on 127.0.0.2: refused there although `localhost` is 127.0.0.1, so the name
            // was not resolved again.
            let elsewhere = HTTPDataLoader(configuration: .init(refusedHostCooldown: .zero), urlCheck: { _ in "127.0.0.2" })
            await #expect(throws: TesseraError(.fetching(.connectionRefused(url: url.absoluteString, recently: false)))) {
                _ = try await elsewhere.load(LoadRequest(url: url), progress: { _ in })
            }
            #expect(origin.count("/pin.png") == 1)
            try await pinned.shutdown()
            try await elsewhere.shutdown()
        }
    }

    @Test("the guard returns the first checked IPv4 address for http, nothing for https")
    func guardAddress() async throws {
        let loopback = try #require(AddressRange("127.0.0.0/8"))
        let check = RemoteSourceGuard(allowedHosts: ["localhost"], allowedRanges: [loopback])
        #expect(try await check.checkedAddress(URL(string: "http://localhost:9/a.png")!) == "127.0.0.1")
        #expect(try await check.checkedAddress(URL(string: "https://localhost:9/a.png")!) == nil)
        await #expect(throws: RemoteRefusal.self) {
            _ = try await RemoteSourceGuard(allowedHosts: ["localhost"], allowedRanges: []).checkedAddress(URL(string: "http://localhost:9/")!)
        }
    }
}
