import Foundation
import Testing
import Tessera
@testable import TesseraServer
import TesseraTestSupport

/// Remote sources of `tessera serve` (`/v1/resize?src=http…`) through the `ImageManager`, and the SSRF guard
/// that refuses loopback, private and other non-public addresses: in process, on a real Hummingbird
/// server and a real origin on 127.0.0.1; the classifier itself on address literals (nothing connects
/// past loopback).
@Suite("tessera serve, remote sources and the SSRF guard")
struct ServeRemoteSourceTests {
    @Test func remoteSourcesGoThroughTheImageManager() async throws {
        let fixture = try ServeFixture()
        let origin = try await Origin.start()
        origin.set("/remote.jpg", .init(body: Array(try ServeFixture.jpeg(width: 320, height: 240)), cacheControl: "max-age=3600"))
        let configuration = fixture.configuration {
            $0.remote.allowedHosts = ["127.0.0.1"]
            $0.remote.allowedAddressRanges = ["127.0.0.1/32"]
        }
        try await fixture.withServer(configuration) { port, _ in
            let src = origin.url("/remote.jpg").absoluteString
            let first = try await RawHTTP.get(port: port, "/v1/resize?src=\(src)&w=160&h=160&mode=fit")
            #expect(first.status == 200)
            #expect(try DecodedBody(first.body) == DecodedBody(format: "jpeg", width: 160, height: 120))
            let second = try await RawHTTP.get(port: port, "/v1/resize?src=\(src)&w=80&h=80&mode=fill")
            #expect(try DecodedBody(second.body) == DecodedBody(format: "jpeg", width: 80, height: 80))
            // Fresh on disk: one download for both sizes.
            #expect(origin.count("/remote.jpg") == 1)
            let etag = try #require(first.headers["etag"])
            let again = try await RawHTTP.get(port: port, "/v1/resize?src=\(src)&w=160&h=160&mode=fit", headers: ["If-None-Match": etag])
            #expect(again.status == 304)
        }
        await origin.stop()
    }

    @Test func remoteSourcesAreOffByDefault() async throws {
        let fixture = try ServeFixture()
        let origin = try await Origin.start()
        origin.set("/remote.jpg", .init(body: Array(try ServeFixture.jpeg(width: 32, height: 32))))
        try await fixture.withServer(fixture.configuration()) { port, _ in
            let response = try await RawHTTP.get(port: port, "/v1/resize?src=\(origin.url("/remote.jpg").absoluteString)&w=10&h=10")
            #expect(response.status == 403)
            #expect(response.text.contains("remote_disabled"))
        }
        #expect(origin.count("/remote.jpg") == 0)
        await origin.stop()
    }

    @Test func theSSRFGuardRefusesLoopbackTargetsEndToEnd() async throws {
        let fixture = try ServeFixture()
        let origin = try await Origin.start()
        origin.set("/remote.jpg", .init(body: Array(try ServeFixture.jpeg(width: 32, height: 32))))
        origin.set("/hop", .init(status: 302, redirect: "http://127.0.0.2:\(origin.port)/remote.jpg"))
        origin.set("/hop-same", .init(status: 302, redirect: "/remote.jpg"))
        // The allow-list names every loopback spelling, but no address range is allowed: all are refused.
        let strict = fixture.configuration { $0.remote.allowedHosts = ["127.0.0.1", "127.0.0.2", "::1", "localhost"] }
        try await fixture.withServer(strict) { port, _ in
            for host in ["127.0.0.1", "127.0.0.2", "[::1]", "localhost"] {
                let response = try await RawHTTP.get(port: port, "/v1/resize?src=http://\(host):\(origin.port)/remote.jpg&w=10&h=10")
                #expect(response.status == 403, "\(host)")
                #expect(response.text.contains("remote_refused"), "\(host)")
            }
            let notListed = try await RawHTTP.get(port: port, "/v1/resize?src=http://127.0.0.3:\(origin.port)/remote.jpg&w=10&h=10")
            #expect(notListed.status == 403)
        }
        #expect(origin.count("/remote.jpg") == 0)
        // 127.0.0.1 allowed explicitly: a redirect to 127.0.0.2 (listed host, refused address) is refused.
        let oneRange = fixture.configuration {
            $0.remote.allowedHosts = ["127.0.0.1", "127.0.0.2"]
            $0.remote.allowedAddressRanges = ["127.0.0.1/32"]
            $0.tablesDirectory = fixture.tables.path + "-range"
        }
        try await fixture.withServer(oneRange) { port, _ in
            let redirected = try await RawHTTP.get(port: port, "/v1/resize?src=\(origin.url("/hop").absoluteString)&w=10&h=10")
            #expect(redirected.status == 403)
            #expect(redirected.text.contains("remote_refused"))
            #expect(origin.count("/hop") == 1)
            #expect(origin.count("/remote.jpg") == 0)
            let followed = try await RawHTTP.get(port: port, "/v1/resize?src=\(origin.url("/hop-same").absoluteString)&w=10&h=10")
            #expect(followed.status == 200)
            #expect(origin.count("/remote.jpg") == 1)
        }
        await origin.stop()
    }

    @Test(arguments: [
        ("10.0.0.1", AddressClass.privateNetwork), ("172.16.5.4", .privateNetwork), ("192.168.1.1", .privateNetwork),
        ("169.254.169.254", .linkLocal), ("[fd00::1]", .uniqueLocal), ("fc00::5", .uniqueLocal), ("0.0.0.0", .unspecified),
        ("::", .unspecified), ("127.0.0.1", .loopback), ("127.0.0.2", .loopback), ("[::1]", .loopback),
        ("::ffff:127.0.0.1", .loopback), ("::ffff:10.0.0.1", .privateNetwork), ("[::ffff:169.254.169.254]", .linkLocal),
        ("::ffff:0.0.0.0", .unspecified), ("224.0.0.1", .multicast), ("ff02::1", .multicast), ("fe80::1%eth0", .linkLocal),
        ("100.64.0.1", .privateNetwork), ("255.255.255.255", .reserved), ("2002:0a00:0001::1", .privateNetwork),
        ("64:ff9b::a9fe:a9fe", .linkLocal),
    ] as [(String, AddressClass)])
    func classifierRefuses(_ literal: String, _ expected: AddressClass) throws {
        let address = try #require(IPAddress(literal))
        #expect(AddressClassifier.classify(address) == expected)
        let guardWithoutRanges = RemoteSourceGuard(allowedHosts: ["x"], allowedRanges: [])
        #expect(!guardWithoutRanges.allows(address: address))
    }

    @Test func classifierLetsPublicAddressesAndAllowedRangesThrough() throws {
        // Literals only: nothing here connects anywhere.
        for literal in ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "172.32.0.1", "100.128.0.1"] {
            #expect(AddressClassifier.classify(try #require(IPAddress(literal))) == nil, "\(literal)")
        }
        for text in ["example.com", "1.2.3", "", "::g", "256.0.0.1"] { #expect(IPAddress(text) == nil, "\(text)") }
        let allowed = RemoteSourceGuard(allowedHosts: ["img.example.com", "*.cdn.example.com"],
                                        allowedRanges: ["10.1.0.0/16", "fd00::/8"].compactMap(AddressRange.init))
        #expect(allowed.allows(address: try #require(IPAddress("10.1.2.3"))))
        #expect(allowed.allows(address: try #require(IPAddress("::ffff:10.1.2.3"))))
        #expect(!allowed.allows(address: try #require(IPAddress("10.2.0.1"))))
        #expect(allowed.allows(address: try #require(IPAddress("fd12::1"))))
        #expect(!allowed.allows(address: try #require(IPAddress("169.254.169.254"))))
        #expect(allowed.allows(host: "IMG.example.com"))
        #expect(allowed.allows(host: "a.cdn.example.com"))
        #expect(!allowed.allows(host: "cdn.example.com.evil.net"))
        #expect(!allowed.allows(host: "evilcdn.example.com"))
        #expect(AddressRange("10.0.0.0/33") == nil)
    }
}
