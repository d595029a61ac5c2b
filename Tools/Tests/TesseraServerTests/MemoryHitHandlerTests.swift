import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Testing
import Tessera
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

        /// `accepts`: besides the photo's JPEG, the answers for these `Accept` headers are made first, so that
        /// they are in memory (before the channel is made: an `EmbeddedChannel` is used on its own thread).
        /// `queries`: the photo's answers with these raw queries are made first too.
        init(accepts: [String] = [], queries: [String] = [], _ change: (inout ServerConfiguration) -> Void = { _ in }) async throws {
            serveFixture = try ServeFixture()
            server = try ImageServer(configuration: serveFixture.configuration(change), logger: Logger(label: "test"))
            let info = ImageService.RequestInfo(route: .preset(name: "thumb", path: "photo.jpg"), path: "/v1/thumb/photo.jpg", rawQuery: nil, accept: nil, ifNoneMatch: nil)
            photo = try await server.service.respond(to: info).body
            for accept in accepts {
                var other = info
                other.accept = accept
                _ = try await server.service.respond(to: other)
            }
            for query in queries {
                let other = ImageService.RequestInfo(route: info.route, path: info.path, rawQuery: query, accept: nil, ifNoneMatch: nil)
                _ = try await server.service.respond(to: other)
            }
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

    @Test func aFullSocketLeavesTheRequestToTheRouterAndKeepAliveIsPlain() async throws {
        let fixture = try await Fixture()
        fixture.channel.isWritable = false
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))
        try fixture.routerAnswers()
        fixture.channel.isWritable = true
        // `Connection: keep-alive` (what browsers send) asks for nothing HTTP/1.1 does not do: a hit.
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg", "Connection: Keep-Alive\r\n"))
        #expect(fixture.router.heads == ["/v1/thumb/photo.jpg"])
        #expect(try Self.responses(try fixture.written()).map(\.body) == [Array("routed".utf8), fixture.photo])
    }

    /// A request that is not plain (here a body, `Connection: close`, HTTP/1.0, an upgrade) goes to the
    /// decoder with every byte after it, its body in order; the connection stays the router's. Bytes the
    /// decoder refuses are its to refuse: a bare LF fails the connection as it did before the handler.
    @Test func afterARequestThatIsNotPlainEveryByteGoesToTheDecoder() async throws {
        let notPlain = ["GET /v1/thumb/photo.jpg HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\n\r\nabc",
                        Fixture.get("/v1/thumb/photo.jpg", "Connection: close\r\n"),
                        "GET /v1/thumb/photo.jpg HTTP/1.0\r\nHost: test\r\n\r\n",
                        Fixture.get("/v1/thumb/photo.jpg", "Connection: Upgrade\r\nUpgrade: websocket\r\n")]
        for (index, request) in notPlain.enumerated() {
            let fixture = try await Fixture()
            try fixture.send(request)
            #expect(fixture.router.heads == ["/v1/thumb/photo.jpg"], "request \(index)")
            guard index == 0 else { continue }
            try fixture.routerAnswers()
            try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))   // plain, but the decoder's now
            try fixture.routerAnswers()
            #expect(fixture.router.heads == ["/v1/thumb/photo.jpg", "/v1/thumb/photo.jpg"])
            let bodies = fixture.router.parts.compactMap { if case .body(let buffer) = $0 { String(buffer: buffer) } else { nil } }
            #expect(bodies == ["abc"])
            #expect(try Self.responses(try fixture.written()).map(\.body) == [Array("routed".utf8), Array("routed".utf8)])
        }
        let bareLineFeeds = try await Fixture()
        #expect(throws: (any Error).self) { try bareLineFeeds.send("GET /v1/thumb/photo.jpg HTTP/1.1\nHost: test\n\n") }
        #expect(try bareLineFeeds.written().isEmpty && bareLineFeeds.router.parts.isEmpty)
    }

    /// A head is read however the bytes arrive: split anywhere, or several in one read (answered together).
    @Test func headsSplitAcrossReadsOrSharingOneAreAnswered() async throws {
        let fixture = try await Fixture()
        let request = Fixture.get("/v1/thumb/photo.jpg", "Accept: image/jpeg\r\n")
        let bytes = Array(request.utf8)
        var written: [UInt8] = []
        for split in [1, 5, 30, bytes.count - 3, bytes.count - 1] {
            try fixture.channel.writeInbound(ByteBuffer(bytes: bytes[..<split]))
            #expect(try fixture.written().isEmpty, "nothing answered before the head is whole (split at \(split))")
            try fixture.channel.writeInbound(ByteBuffer(bytes: bytes[split...]))
            written += try fixture.written()
        }
        try fixture.send(String(repeating: request, count: 3))
        written += try fixture.written()
        let answers = try Self.responses(written)
        #expect(answers.count == 8 && answers.allSatisfy { $0.status == 200 && $0.body == fixture.photo })
        #expect(fixture.router.parts.isEmpty)
    }

    /// Hits are requests read and answered to the connection's deadlines: a connection asking for hits is
    /// never idle, closes one idle timeout (60 s) after its last hit, and a head begun after hits is cut at
    /// the header timeout (10 s).
    @Test func hitsCountForTheConnectionsIdleAndHeaderTimeouts() async throws {
        let busy = try await Fixture()
        for _ in 0..<7 {
            busy.channel.embeddedEventLoop.advanceTime(by: .seconds(15))
            try busy.send(Fixture.get("/v1/thumb/photo.jpg"))
        }
        #expect(busy.channel.isActive, "105 s of hits, never 60 s without one")
        #expect(try Self.responses(try busy.written()).count == 7 && busy.router.parts.isEmpty)
        busy.channel.embeddedEventLoop.advanceTime(by: .seconds(59))
        #expect(busy.channel.isActive)
        busy.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!busy.channel.isActive)

        let slow = try await Fixture()
        try slow.send(Fixture.get("/v1/thumb/photo.jpg") + "GET /v1/thumb/pho")
        slow.channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(slow.channel.isActive)
        slow.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!slow.channel.isActive)
        #expect(try Self.responses(try slow.written()).count == 1)
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

    // MARK: Answers kept by the event loop

    /// With a source check interval, the loop keeps each memory answer and gives it again while the check
    /// is trusted: the same status, headers and body as the first time, counted as every memory hit, one
    /// answer per request target and per format `Accept` chooses (AVIF before WebP, JPEG without either).
    /// A hit answered on the event loop carries its request's own `Content-Disposition` (never another
    /// URL's of the same entry) and the source's `Last-Modified`; `If-Modified-Since` at that time is a `304`
    /// there, an earlier one a `200`.
    @Test func aHitCarriesItsDispositionAndLastModified() async throws {
        let fixture = try await Fixture(queries: ["filename=my%20cat.png&attachment=1"])
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg?filename=my%20cat.png&attachment=1"))
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg"))
        let answers = try Self.responses(try fixture.written())
        #expect(fixture.router.parts.isEmpty)
        try #require(answers.count == 2)
        #expect(answers[0].headers["content-disposition"] == "attachment; filename=\"my_cat.jpg\"")
        #expect(answers[1].headers["content-disposition"] == nil)
        #expect(answers[0].body == answers[1].body && answers[0].headers["etag"] == answers[1].headers["etag"])
        let modified = try #require(answers[1].headers["last-modified"])
        let file = fixture.serveFixture.root.appendingPathComponent("photo.jpg").path
        let seconds = try #require(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date).timeIntervalSince1970
        #expect(HTTPCacheInfo.parseHTTPDate(modified)?.timeIntervalSince1970 == seconds.rounded(.down))
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg", "If-Modified-Since: \(modified)\r\n"))
        #expect(String(decoding: try fixture.written(), as: UTF8.self).hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
        try fixture.send(Fixture.get("/v1/thumb/photo.jpg", "If-Modified-Since: Mon, 01 Jan 1990 00:00:00 GMT\r\n"))
        #expect(String(decoding: try fixture.written(), as: UTF8.self).hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(fixture.router.parts.isEmpty, "conditional hits are answered on the event loop too")
    }

    @Test func keptAnswersAreTheRoutesAnswersPerTargetAndFormat() async throws {
        let accepts: [(header: String?, type: String)] = [
            (nil, "image/jpeg"), ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "image/avif"),
            ("image/webp,*/*", "image/webp"), ("image/avif;q=0, image/webp", "image/webp"), ("IMAGE/AVIF", "image/avif"),
        ]
        let f = try await Fixture(accepts: accepts.compactMap(\.header)) {
            $0.sourceCheckIntervalSeconds = 60
            $0.avifMinPixels = 0   // AVIF at the thumbnail's size too, so that each format is one answer
        }
        let before = f.server.service.statistics.memoryHits
        for _ in 0..<3 {
            for accept in accepts { try f.send(Fixture.get("/v1/thumb/photo.jpg", accept.header.map { "Accept: \($0)\r\n" } ?? "")) }
        }
        #expect(f.router.parts.isEmpty)
        let answers = try Self.responses(try f.written())
        try #require(answers.count == 3 * accepts.count)
        #expect(f.server.service.statistics.memoryHits - before == answers.count)
        for (index, answer) in answers.enumerated() {
            let first = answers[index % accepts.count]
            #expect(answer.status == 200 && answer.headers["content-type"] == accepts[index % accepts.count].type)
            #expect(answer.headers["vary"] == "Accept" && answer.headers["x-tessera-cache"] == "memory")
            #expect(answer.body == first.body && answer.headers["etag"] == first.headers["etag"])
            #expect(answer.headers["content-length"] == String(answer.body.count))
            #expect(Set(answer.headers.keys) == Set(first.headers.keys))
        }
        #expect(Set(answers.prefix(accepts.count).map { $0.headers["etag"] ?? "" }).count == 3, "one answer per format")
        // A conditional request is the service's to answer: its tag matches, so a 304.
        try f.send(Fixture.get("/v1/thumb/photo.jpg", "If-None-Match: \(answers[0].headers["etag"] ?? "")\r\n"))
        #expect(String(decoding: try f.written(), as: UTF8.self).hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
    }

    /// A connection keeps the metrics of its last hit's route, preset and status: hits that change status
    /// on one connection (a `200`, then `304`s, then a `200` again) are each counted under their own.
    @Test func hitsAreCountedUnderTheirOwnStatusOnOneConnection() async throws {
        let f = try await Fixture { $0.sourceCheckIntervalSeconds = 60 }
        func count(status: Int) -> Int {
            let text = f.server.registry.emitToString()
            let line = text.split(separator: "\n").first { $0.hasPrefix("tessera_requests_total{") && $0.contains("status=\"\(status)\"") && $0.contains("preset=\"thumb\"") }
            return line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        }
        try f.send(Fixture.get("/v1/thumb/photo.jpg"))
        let etag = try #require(try Self.responses(try f.written()).first?.headers["etag"])
        let before = (ok: count(status: 200), notModified: count(status: 304))
        for headers in ["", "If-None-Match: \(etag)\r\n", "If-None-Match: \(etag)\r\n", "", "If-None-Match: \(etag)\r\n", ""] {
            try f.send(Fixture.get("/v1/thumb/photo.jpg", headers))
        }
        #expect(try Self.responses(try f.written()).map(\.status) == [200, 304, 304, 200, 304, 200])
        #expect(f.router.parts.isEmpty)
        #expect(count(status: 200) - before.ok == 3)
        #expect(count(status: 304) - before.notModified == 3)
    }

    /// Checking every request (no interval, the default) keeps nothing: a source changed after its answer
    /// is read again at the next request, which goes to the router (its new version is not in memory).
    @Test func withoutACheckIntervalEveryHitChecksItsFile() async throws {
        let f = try await Fixture { $0.sourceCheckIntervalSeconds = 0 }
        try f.send(Fixture.get("/v1/thumb/photo.jpg"))
        try f.send(Fixture.get("/v1/thumb/photo.jpg"))
        #expect(try Self.responses(try f.written()).map(\.body) == [f.photo, f.photo])
        try ServeFixture.jpeg(width: 200, height: 100).write(to: f.serveFixture.root.appendingPathComponent("photo.jpg"))
        try f.send(Fixture.get("/v1/thumb/photo.jpg"))
        #expect(f.router.heads == ["/v1/thumb/photo.jpg"])
    }

    /// What the handler rests on: the service records each target it resolves, and the memory answer of a
    /// recorded target is the one the request path gives, while the file's check stands; after a change the
    /// answer is gone only once the check is made again (at once without an interval).
    @Test func aRecordedTargetIsAnsweredFromMemoryWhileItsFilesCheckStands() async throws {
        for interval in [0.0, 60] {
            let f = try await Fixture { $0.sourceCheckIntervalSeconds = interval }
            let service = f.server.service
            let key = ResolvedTargets.Key(target: "/v1/thumb/photo.jpg", accepted: nil)
            let resolved = try #require(service.targets.get(key), "the fixture's respond recorded its target")
            #expect(resolved.path == "/v1/thumb/photo.jpg" && resolved.route == .preset(name: "thumb", path: "photo.jpg"))
            #expect(service.targets.get(ResolvedTargets.Key(target: "/v1/thumb/photo.jpg", accepted: .avif)) == nil,
                    "another format is another target")
            let answer = try #require(service.memoryAnswer(to: resolved, for: key, ifNoneMatch: nil))
            #expect(answer.status == 200 && answer.outcome == .memory && answer.body == f.photo)
            let notModified = try #require(service.memoryAnswer(to: resolved, for: key, ifNoneMatch: answer.etag))
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            try ServeFixture.jpeg(width: 200, height: 100).write(to: f.serveFixture.root.appendingPathComponent("photo.jpg"))
            let current = try #require(service.targets.get(key))
            let afterChange = service.memoryAnswer(to: current, for: key, ifNoneMatch: nil)
            if interval > 0 {
                #expect(afterChange?.body == f.photo, "within the interval the last check stands (nginx's open_file_cache_valid)")
            } else {
                #expect(afterChange == nil, "checked at once: the new version is not in memory")
            }
        }
    }

    /// The map of resolved targets is bounded: past its capacity the least recently used target goes.
    @Test func resolvedTargetsForgetTheLeastRecentlyUsedPastTheirCapacity() async throws {
        let f = try await Fixture()
        let targets = ResolvedTargets()
        let resolved = try #require(f.server.service.targets.get(ResolvedTargets.Key(target: "/v1/thumb/photo.jpg", accepted: nil)))
        for index in 0...ResolvedTargets.capacity {
            targets.record(ResolvedTargets.Key(target: "/\(index)", accepted: nil), resolved)
            if index == 0 { _ = targets.get(ResolvedTargets.Key(target: "/0", accepted: nil)) }
        }
        #expect(targets.count == ResolvedTargets.capacity)
        #expect(targets.get(ResolvedTargets.Key(target: "/0", accepted: nil)) == nil)
        #expect(targets.get(ResolvedTargets.Key(target: "/1", accepted: nil)) != nil)
    }
}
