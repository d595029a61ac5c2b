#if Serving
import NIOCore
import Tessera

extension ImageService {
    /// An encoded image, or a `304` for a matching `If-None-Match`.
    public struct ImageResponse: Sendable {
        /// 200 or 304; a fallback image's configured status (``ServerConfiguration/Fallback/status``).
        public var status: Int
        /// Empty for 304.
        public var body: [UInt8] {
            get { Array(bodyBuffer.readableBytesView) }
            set { bodyBuffer = ByteBuffer(bytes: newValue) }
        }
        /// The body as held by the response cache: written to a socket without a copy.
        var bodyBuffer: ByteBuffer
        /// The `Content-Type` (`image/jpeg`, `image/png`, `image/webp`, `image/avif`).
        public var contentType: String
        /// The strong `ETag`, quoted: 128 bits of SHA-256 of the response's cache key, in hex.
        public var etag: String
        /// The `Cache-Control` value (`public, max-age=N`; the shorter
        /// ``ServerConfiguration/partialMaxAgeSeconds`` for a truncated source).
        public var cacheControl: String
        /// Where the answer came from (`X-Tessera-Cache`).
        public var outcome: CacheOutcome
        /// How complete the decode of the source was: `X-Tessera-Decode: partial` for
        /// `DecodeIntegrity.truncated`, `damaged` for `DecodeIntegrity.damaged`, no header when intact.
        public var integrity: DecodeIntegrity = .intact
        /// Whether this is the fallback image standing in for a missing or undecodable source
        /// (`X-Tessera-Fallback: 1`).
        public var isFallback = false
        /// When the source was last modified, in seconds since 1970 (`Last-Modified`); `nil` when unknown.
        public var lastModified: Int?
        /// `Content-Disposition` (`inline; filename="NAME.EXT"`), when the request has `filename` or `attachment`.
        public var contentDisposition: String?
        /// `X-Tessera-Animation`, for an animated source: `N frames` when the answer animates, `first frame`
        /// when the request or the output format asked for a still, `first frame: over the limit` when the
        /// source is over the animation limits; `nil` for a still source.
        public var animation: String?
        /// A memory hit's status line and header fields but `Date`, as its cache entry keeps them
        /// (``ResponseCache/Entry/hitHead``); `nil` for every other answer.
        var hitHead: ByteBuffer?
    }
}

/// Counts of what the service did (also in `/metrics`).
public struct ServiceStatistics: Sendable, Hashable {
    /// Source images decoded (preset fills and ad-hoc resizes).
    public var decodes = 0
    /// Responses encoded.
    public var encodes = 0
    /// Responses served from the encoded-response memory cache.
    public var memoryHits = 0
    /// Preset requests answered from an image table.
    public var tableHits = 0
    /// Preset requests that had to fill the table.
    public var tableMisses = 0
    /// Times ``ImageService/shutdown()`` did its work (tables flushed, loaders and stores closed): 0, then 1
    /// however often it is called.
    public var shutdowns = 0
}
#endif
