import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing
@testable import TesseraServer
import TesseraTestSupport

/// `MemoryHitHandler` in the pipeline `tessera serve` builds (`ImageHTTPChannel.addHandlers`: NIO's HTTP/1
/// codec, the connection deadlines, the handler, the HTTPTypes codec, Hummingbird's connection state), on an `EmbeddedChannel`: raw request bytes in, raw response bytes out, and a recorder at the
/// tail standing for Hummingbird's router, which sees what the handler passes on.
@Suite("Memory hits on the event loop")
struct MemoryHitHandlerTests {
    /// The requests the handler passed on, as the router would see them; answers them on demand.
    final class Router: ChannelDuplexHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart
        var parts: [HTTPRequestPart] = []
        var heads: [String] { parts.compactMap { if case .head(let head) = $0 { head.path } else { nil } } }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { parts.append(unwrapInboundIn(data)) }
    }

    struct Fixture {
        let serveFixture: ServeFixture
        let server: ImageServer
        let channel: EmbeddedChannel
        let router: Router
        /// The body the service answers `/v1/thumb/photo.jpg` with (from the response cache once warm).
        let photo: [UInt8]

        init() async throws {
            serveFixture = try ServeFixture()
            server = try ImageServer(configuration: serveFixture.configuration(), logger: Logger(label: "test"))
            let info = ImageService.RequestInfo(route: .preset(name: "thumb", path: "photo.jpg"), path: "/v1/thumb/photo.jpg", rawQuery: nil, accept: nil, ifNoneMatch: nil)
            photo = try await server.service.respond(to: info).body
            channel = EmbeddedChannel()
            router = Router()
            let operations = channel.pipeline.syncOperations
            try ImageHTTPChannel.addHandlers(to: operations, routes: server.routes, logger: Logger(label: "test"))
            try operations.addHandler(router)
            // Active, like an accepted connection (the connection-state handler acts on active channels only).
            try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080)).get()
        }

        func send(_ text: String) throws { try channel.writeInbound(ByteBuffer(string: text)) }

        /// Everything written to the socket so far.
        func written() throws -> [UInt8] {
            var bytes: [UInt8] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += Array(buffer.readableBytesView) }
            return bytes
        }

        /// The router answers its oldest unanswered request (as Hummingbird would, through the pipeline).
        func routerAnswers(_ status: HTTPResponse.Status = .ok, body: String = "routed") throws {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: status, headerFields: [.contentLength: "\(body.utf8.count)"])))
            try channel.writeOutbound(HTTPResponsePart.body(ByteBuffer(string: body)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }

        static func get(_ path: String, _ headers: String = "") -> String { "GET \(path) HTTP/1.1\r\nHost: test\r\n\(headers)\r\n" }
    }

    /// HTTP/1.1 responses in `bytes`, split by their `Content-Length`.
    static func responses(_ bytes: [UInt8]) throws -> [(status: Int, headers: [String: String], body: [UInt8])] {
        var result: [(Int, [String: String], [UInt8])] = []
        var rest = bytes[...]
        let separator = Array("\r\n\r\n".utf8)
        while !rest.isEmpty {
            let end = try #require(rest.indices.first { rest[$0...].starts(with: separator) })
            let lines = String(decoding: rest[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            let status = try #require(Int(lines[0].split(separator: " ")[1]))
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = end + separator.count
            result.append((status, headers, Array(rest[bodyStart..<(bodyStart + length)])))
            rest = rest[(bodyStart + length)...]
        }
        return result
    }

    @Test func aHitIsAnsweredOnTheEventLoopWithTheRoutesHeaders() async throws {
        let fixture = try await Fixture()
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))
        let answers = try Self.responses(try fixture.written())
        #expect(fixture.router.parts.isEmpty)
        try #require(answers.count == 1)
        let answer = answers[0]
        #expect(answer.status == 200)
        #expect(answer.body == fixture.photo)
        #expect(answer.headers["content-type"] == "image/jpeg")
        #expect(answer.headers["x-tessera-cache"] == "memory")
        #expect(answer.headers["vary"] == "Accept")
        #expect(answer.headers["cache-control"] == "public, max-age=86400")
        #expect(answer.headers["server"] == "tessera")
        #expect(answer.headers["date"]?.hasSuffix(" GMT") == true)
        // The same tag the route gives.
        let info = ImageService.RequestInfo(route: .preset(name: "thumb", path: "photo.jpg"), path: "/v1/thumb/photo.jpg", rawQuery: nil, accept: nil, ifNoneMatch: nil)
        #expect(answer.headers["etag"] == (try await fixture.server.service.respond(to: info).etag))
        #expect(fixture.server.service.statistics.memoryHits >= 1)
    }

    /// NIO's encoder pairs each response head with the method of the request it answers (from a queue the
    /// decoder fills). A hit must go through the encoder too: were it written around it, the queue would
    /// keep the hit's `GET` (one entry per hit, growing for as long as the connection lives), the `HEAD`
    /// below would be answered as a `GET`, and the `GET` after it as a `HEAD`, its body refused.
    @Test func aHitKeepsTheEncodersRequestMethodsInStep() async throws {
        let f = try await Fixture()
        try f.send(Fixture.get("/v1/thumb/photo.jpg"))
        try f.send("HEAD /elsewhere HTTP/1.1\r\nHost: test\r\n\r\n")
        try f.channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok, headerFields: [.contentLength: "6"])))
        try f.channel.writeOutbound(HTTPResponsePart.end(nil))
        try f.send(Fixture.get("/elsewhere"))
        try f.routerAnswers(body: "routed")
        let text = String(decoding: try f.written(), as: UTF8.self)
        #expect(f.router.heads == ["/elsewhere", "/elsewhere"], "the hit was answered by the handler")
        #expect(text.hasSuffix("\r\n\r\nrouted"), "the GET after the HEAD has its body")
        #expect(text.components(separatedBy: "HTTP/1.1 200 OK").count == 4, "three responses")
    }

    @Test func aMatchingIfNoneMatchGets304WithoutABody() async throws {
        let fixture = try await Fixture()
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))
        let etag = try #require(try Self.responses(try fixture.written()).first?.headers["etag"])
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg", "If-None-Match: \(etag)\r\n"))
        let bytes = try fixture.written()
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
        #expect(String(decoding: bytes, as: UTF8.self).hasSuffix("\r\n\r\n"))
        #expect(!String(decoding: bytes, as: UTF8.self).lowercased().contains("content-length"))
        #expect(fixture.router.parts.isEmpty)
    }

    @Test func missesErrorsAndOtherRoutesGoToTheRouter() async throws {
        let fixture = try await Fixture()
        for path in ["/v1/thumb/sub/tall.jpg", "/v1/thumb/../secret.jpg", "/v1/nosuch/photo.jpg", "/healthz", "/v1/resize?src=photo.jpg&w=10&h=10"] {
            try fixture.send(Fixture.get(path))
            try fixture.routerAnswers()
        }
        #expect(fixture.router.heads == ["/v1/thumb/sub/tall.jpg", "/v1/thumb/../secret.jpg", "/v1/nosuch/photo.jpg", "/healthz",
                                         "/v1/resize?src=photo.jpg&w=10&h=10"])
        #expect(try Self.responses(try fixture.written()).map(\.body) == Array(repeating: Array("routed".utf8), count: 5))
    }

    @Test func pipelinedAnswersKeepTheRequestOrder() async throws {
        let fixture = try await Fixture()
        // A miss, then a hit, in one packet: the hit must wait for the miss's answer, so it goes on too.
        try fixture.send(Fixture.get("/v1/thumb/sub/tall.jpg") + Fixture.get("/v1/thumb/photo.jpg"))
        #expect(fixture.router.heads == ["/v1/thumb/sub/tall.jpg", "/v1/thumb/photo.jpg"])
        #expect(try fixture.written().isEmpty)
        try fixture.routerAnswers(body: "first")
        try fixture.routerAnswers(body: "second")
        // Both answered: the next hit is the handler's again, after the router's two.
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))
        #expect(fixture.router.heads.count == 2)
        let answers = try Self.responses(try fixture.written())
        #expect(answers.map(\.body) == [Array("first".utf8), Array("second".utf8), fixture.photo])
    }

    @Test func aConnectionHeaderABodyOrAFullSocketLeaveTheRequestToTheRouter() async throws {
        let fixture = try await Fixture()
        try fixture.send("GET /v1/thumb/photo.jpg HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nabc")
        try fixture.routerAnswers()
        fixture.channel.isWritable = false
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))
        try fixture.routerAnswers()
        fixture.channel.isWritable = true
        // Last: NIO's decoder takes nothing after a `Connection: close` request.
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg", "Connection: close\r\n"))
        try fixture.routerAnswers()
        #expect(fixture.router.heads == Array(repeating: "/v1/thumb/photo.jpg", count: 3))
        // The body reached the router after its head, in order.
        let bodies = fixture.router.parts.compactMap { if case .body(let buffer) = $0 { String(buffer: buffer) } else { nil } }
        #expect(bodies == ["abc"])
        #expect(try Self.responses(try fixture.written()).allSatisfy { $0.body == Array("routed".utf8) })
    }

    /// A graceful shutdown closes an idle connection at once; on a busy one, a hit read after it began waits
    /// behind the routed request, and the connection closes after both answers.
    @Test func aGracefulShutdownAnswersWhatWasAskedThenCloses() async throws {
        let idle = try await Fixture()
        idle.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(!idle.channel.isActive)

        let busy = try await Fixture()
        try busy.send(Fixture.get("/v1/thumb/sub/tall.jpg"))
        busy.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(busy.channel.isActive)
        try busy.send(Fixture.get("/v1/thumb/photo.jpg"))
        #expect(busy.router.heads == ["/v1/thumb/sub/tall.jpg", "/v1/thumb/photo.jpg"])
        try busy.routerAnswers(body: "first")
        #expect(busy.channel.isActive)
        try busy.routerAnswers(body: "second")
        #expect(!busy.channel.isActive)
        #expect(try Self.responses(try busy.written()).map(\.body) == [Array("first".utf8), Array("second".utf8)])
    }
}
