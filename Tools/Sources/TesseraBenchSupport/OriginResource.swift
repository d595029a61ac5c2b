extension Origin {
    /// What the origin answers for one path.
    ///
    /// The response carries `status`, `body` and the given headers. A request whose `If-None-Match`
    /// equals ``etag`` (or, without an ETag, whose `If-Modified-Since` equals ``lastModified``) gets
    /// `304 Not Modified` with the headers and no body.
    public struct Resource: Sendable {
        /// The HTTP status code of a full response.
        public var status: Int
        /// The response body.
        public var body: [UInt8]
        /// The `Cache-Control` header, if any.
        public var cacheControl: String?
        /// The `ETag` header, if any; also the validator compared with `If-None-Match`.
        public var etag: String?
        /// The `Last-Modified` header, if any; compared with `If-Modified-Since` when there is no ETag.
        public var lastModified: String?
        /// The response waits until this gate opens (after the arrival is logged).
        public var gate: OriginGate?
        /// Streams the body in chunks of this many bytes without `Content-Length`.
        public var chunkSize: Int?
        /// Answers `302 Found` with this `Location` instead of the body.
        public var redirect: String?
        /// Sends the head (with the full `Content-Length`) and the first ``stallAfter`` bytes, then
        /// waits for this gate before sending the rest: a body that stops trickling.
        public var stall: OriginGate?
        /// How many body bytes are sent before the ``stall`` gate.
        public var stallAfter: Int
        /// The `Content-Type` header, if any.
        public var contentType: String?
        /// When set, only requests whose `Authorization` header is the credential's accepted value get
        /// the resource; any other gets `401 Unauthorized` with `WWW-Authenticate: Bearer` (still counted).
        public var credential: OriginCredential?
        /// More response header fields by name (`x-amz-version-id`, say), sent with every answer but a `404` or `401`.
        public var headers: [String: String]

        /// A resource; by default `200 OK` with an empty body and no extra headers.
        public init(status: Int = 200, body: [UInt8] = [], cacheControl: String? = nil, etag: String? = nil,
                    lastModified: String? = nil, gate: OriginGate? = nil, chunkSize: Int? = nil, redirect: String? = nil,
                    stall: OriginGate? = nil, stallAfter: Int = 0, contentType: String? = nil,
                    credential: OriginCredential? = nil, headers: [String: String] = [:]) {
            self.status = status
            self.body = body
            self.cacheControl = cacheControl
            self.etag = etag
            self.lastModified = lastModified
            self.gate = gate
            self.chunkSize = chunkSize
            self.redirect = redirect
            self.stall = stall
            self.stallAfter = stallAfter
            self.contentType = contentType
            self.credential = credential
            self.headers = headers
        }
    }

    /// One request as it reached the origin: its path, the validators, credentials and host it carried.
    public struct Arrival: Sendable, Equatable {
        /// The request path, without the query.
        public var path: String
        /// The `If-None-Match` header, if any.
        public var ifNoneMatch: String?
        /// The `If-Modified-Since` header, if any.
        public var ifModifiedSince: String?
        /// The `Authorization` header, if any.
        public var authorization: String?
        /// The `Host` header (`name:port`), if any.
        public var host: String?

        /// An arrival for `path` with the given validators, credentials and host.
        public init(path: String, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, authorization: String? = nil,
                    host: String? = nil) {
            self.path = path
            self.ifNoneMatch = ifNoneMatch
            self.ifModifiedSince = ifModifiedSince
            self.authorization = authorization
            self.host = host
        }
    }

    /// Produces a resource for a path that has none set, or `nil` for `404 Not Found`. Called on every
    /// such request, so it can read files or build bytes on demand.
    public typealias Generator = @Sendable (_ path: String) async -> Resource?
}
