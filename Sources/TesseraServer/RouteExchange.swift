#if Serving
import Hummingbird
import NIOCore

/// A request as the image routes read it, whichever web framework received it: the method, the path and
/// query as sent (percent-encoded) and the header fields. ``ImageRoutes/add(to:prefix:)`` makes one from
/// Hummingbird's request; the `TesseraVapor` product makes one from Vapor's.
public struct RouteRequest: Sendable {
    /// `GET`, `HEAD` or `POST`.
    public var method: HTTPRequest.Method
    /// The path as sent, percent-encoded, with the mount prefix (``ImageRoutes/Endpoint``s strip it).
    public var path: String
    /// The query as sent, without the `?`; `nil` without one.
    public var query: String?
    /// The request's header fields (`Accept`, `If-None-Match`, `If-Modified-Since`, `Authorization` are read).
    public var headers: HTTPFields

    /// A request of `method` for `path` and `query` with `headers`.
    public init(method: HTTPRequest.Method, path: String, query: String?, headers: HTTPFields = [:]) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
    }

    /// Hummingbird's `request`, as the routes read it.
    init(_ request: Request) {
        self.init(method: request.method, path: request.uri.path, query: request.uri.query, headers: request.headers)
    }
}

/// An answer of the image routes before a web framework writes it: the status, the header fields (without
/// `Content-Length`, `Date` and `Server`, which the framework adds) and the whole body. The answer to a
/// `HEAD` request carries the `GET` answer's body; the framework writes its length and not its bytes.
public struct RouteAnswer: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The header fields.
    public var headers: HTTPFields
    /// The body, as the response cache holds it (no copy); empty for `304` and `204`.
    public var body: ByteBuffer

    /// An answer of `status` with `headers` and `body`.
    public init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer = ByteBuffer()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

extension Response {
    /// `answer` as Hummingbird's response; for a `HEAD` request (`head`) its status and headers,
    /// `Content-Length` included, without the body.
    init(_ answer: RouteAnswer, head: Bool) {
        let response = Response(status: answer.status, headers: answer.headers, body: ResponseBody(byteBuffer: answer.body))
        self = head ? response.createHeadResponse() : response
    }
}
#endif
