import Testing
@testable import TesseraServer

/// What `PlainRequestHead` reads, and what it leaves to NIO's decoder: exactly the requests whose head ends
/// at its first empty line and that carry no body.
@Suite("Plain request heads")
struct PlainRequestHeadTests {
    enum Read: Equatable {
        case incomplete, other
        case plain(target: String, isGet: Bool, accept: String?, ifNoneMatch: String?, ifModifiedSince: String?, length: Int)
    }

    static func read(_ text: String) -> Read {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { raw in
            switch PlainRequestHead.read(UnsafeRawBufferPointer(raw)) {
            case .incomplete: .incomplete
            case .other: .other
            case .plain(let head, let length):
                .plain(target: head.target, isGet: head.isGet, accept: head.accept, ifNoneMatch: head.ifNoneMatch,
                       ifModifiedSince: head.ifModifiedSince, length: length)
            }
        }
    }

    @Test func aBrowsersGetIsPlainWithItsFields() {
        let head = "GET /v1/thumb/a.jpg?w=1 HTTP/1.1\r\nHost: x\r\nACCEPT:  image/avif,*/*;q=0.8 \r\nIf-None-Match: \"e\"\r\n"
            + "if-modified-since: Mon, 01 Jan 1990 00:00:00 GMT\r\nConnection: keep-alive\r\nUser-Agent: t\u{e9}st\r\n\r\n"
        #expect(Self.read(head + "GET /next") == .plain(target: "/v1/thumb/a.jpg?w=1", isGet: true, accept: "image/avif,*/*;q=0.8",
                                                         ifNoneMatch: "\"e\"", ifModifiedSince: "Mon, 01 Jan 1990 00:00:00 GMT",
                                                         length: head.utf8.count))
        #expect(Self.read("HEAD / HTTP/1.1\r\n\r\n") == .plain(target: "/", isGet: false, accept: nil, ifNoneMatch: nil,
                                                               ifModifiedSince: nil, length: 19))
    }

    @Test func aHeadWithoutItsEmptyLineIsIncompleteUpToTheLimit() {
        for text in ["", "GET", "GET / HTTP/1.1\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r", "POST / HTTP/1.1\r\n"] {
            #expect(Self.read(text) == .incomplete, "\(text.debugDescription)")
        }
        #expect(Self.read("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: PlainRequestHead.maximumLength)) == .other)
        let long = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: PlainRequestHead.maximumLength) + "\r\n\r\n"
        #expect(Self.read(long) == .other)
    }

    @Test func everythingElseIsLeftToTheDecoder() {
        let requests = [
            "POST / HTTP/1.1\r\n\r\n", "get / HTTP/1.1\r\n\r\n", "GET http://x/ HTTP/1.1\r\n\r\n", "GET * HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.0\r\n\r\n", "GET / HTTP/2\r\n\r\n", "GET /a b HTTP/1.1\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "GET / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", "GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET / HTTP/1.1\r\nConnection: close\r\n\r\n", "GET / HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n\r\n",
            "GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: keep-alive\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : x\r\n\r\n", "GET / HTTP/1.1\r\nHost\r\n\r\n", "GET / HTTP/1.1\r\n: x\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nA: b\nC: d\r\n\r\n", "GET / HTTP/1.1\r\nA: b\0c\r\n\r\n",
            "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", "GET /\u{7f} HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\nHost: x", "\nGET / HTTP/1.1\r\n\r\n",
        ]
        for request in requests {
            #expect(Self.read(request) == .other, "\(request.debugDescription)")
        }
        let many = "GET / HTTP/1.1\r\n" + String(repeating: "A: b\r\n", count: PlainRequestHead.maximumFields + 1) + "\r\n"
        #expect(Self.read(many) == .other)
    }
}
