import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
@testable import TesseraServer
import TesseraTestSupport

/// `ConnectionDeadlines` behind NIO's HTTP/1 codec on an `EmbeddedChannel`, whose clock only moves when
/// the test moves it: which state closes a connection, and exactly when.
@Suite("Connection deadlines")
struct ConnectionDeadlinesTests {
    /// The requests the handler passed on; answers them on demand, as the router would.
    final class Router: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        var heads = 0
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head = unwrapInboundIn(data) { heads += 1 }
        }
    }

    struct Connection {
        let channel = EmbeddedChannel()
        let router = Router()

        /// A connection with a 60 s idle timeout and a 10 s header timeout, open at time 0.
        init() throws {
            let operations = channel.pipeline.syncOperations
            try operations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try operations.addHandler(ConnectionDeadlines(idleTimeout: .seconds(60), headerTimeout: .seconds(10), logger: Logger(label: "test")))
            try operations.addHandler(router)
            try channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080)).wait()
        }

        var isOpen: Bool { channel.isActive }
        func send(_ text: String) throws { try channel.writeInbound(ByteBuffer(string: text)) }
        func wait(_ seconds: Double) { channel.embeddedEventLoop.advanceTime(by: .milliseconds(Int64(seconds * 1000))) }
        func answer() throws {
            try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "0"])))
            try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        }
    }

    static let request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

    @Test func aSilentConnectionClosesAtTheIdleTimeout() throws {
        let connection = try Connection()
        connection.wait(59.9)
        #expect(connection.isOpen)   // far past the header timeout: no byte, no head started
        connection.wait(0.1)
        #expect(!connection.isOpen)
    }

    @Test func theIdleTimeoutRunsFromTheLastAnswer() throws {
        let connection = try Connection()
        connection.wait(30)
        try connection.send(Self.request)
        #expect(connection.router.heads == 1)
        connection.wait(100)   // busy: the router has not answered, no deadline
        #expect(connection.isOpen)
        try connection.answer()
        connection.wait(59.9)
        #expect(connection.isOpen)
        try connection.send(Self.request)   // a second request, answered at once
        try connection.answer()
        connection.wait(59.9)
        #expect(connection.isOpen)
        connection.wait(0.1)
        #expect(!connection.isOpen)
    }

    @Test func anUnfinishedHeadClosesAtTheHeaderTimeoutHoweverItTrickles() throws {
        let connection = try Connection()
        connection.wait(20)
        try connection.send("GET /healthz HTTP/1.1\r\n")
        for _ in 0..<9 {
            connection.wait(1)
            try connection.send("X: y\r\n")   // more bytes of the same head give it no more time
        }
        connection.wait(0.9)
        #expect(connection.isOpen)
        connection.wait(0.1)
        #expect(!connection.isOpen)
        #expect(connection.router.heads == 0)
    }

    @Test func aHeadFinishedInTimeStopsTheHeaderClock() throws {
        let connection = try Connection()
        try connection.send("GET /healthz HTTP/1.1\r\n")
        connection.wait(9)
        try connection.send("Host: x\r\n\r\n")
        #expect(connection.router.heads == 1)
        connection.wait(30)
        #expect(connection.isOpen)   // busy now
        try connection.answer()
        connection.wait(59)
        #expect(connection.isOpen)   // idle since the answer: the idle timeout, not the header one
        connection.wait(1)
        #expect(!connection.isOpen)
    }

    @Test func aSlowBodyIsHeldToTheIdleTimeoutBetweenReads() throws {
        let connection = try Connection()
        try connection.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345")
        connection.wait(50)
        try connection.send("678")
        connection.wait(59.9)
        #expect(connection.isOpen)
        connection.wait(0.1)
        #expect(!connection.isOpen)
    }
}
