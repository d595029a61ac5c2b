import Foundation
import TesseraImaging
import TesseraTables

/// One request for an image, as a value: where it comes from, the size and content mode it is wanted
/// at, its priority, how caches may answer it (``cachePolicy``, ``options``, ``cacheKey``), and extra
/// HTTP headers. ``ImageManager`` takes it for
/// `image`, `loadImage`, `prefetch` and `cachedImage`; `ImageCache` takes entity requests (its
/// `image(for:)` and `cachedImage(for:)`, declared with the request in this layer).
///
/// ```swift
/// let thumb = ImageRequest(url: url, size: PixelSize(width: 100, height: 100))          // aspect fill
/// let fresh = ImageRequest(url: url, cachePolicy: .reloadIgnoringCache,
///                          headers: ["Authorization": "Bearer \(token)"])
/// let avatar = ImageRequest(entity: user, format: small)                                 // for ImageCache
/// let signed = ImageRequest(url: presignedURL, cacheKey: "avatars/42")                   // token-free identity
/// ```
public struct ImageRequest: Sendable {
    /// The five priority levels (``/TesseraTables/FetchPriority``), under the name Nuke gives them.
    public typealias Priority = FetchPriority

    /// Which cache layers a request may read and write, one switch each, and whether it may load at
    /// all. The empty set (the default) uses every layer.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The raw bits.
        public let rawValue: Int
        /// Creates options from raw bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Do not answer from the memory cache of decoded images.
        public static let disableMemoryCacheReads = Options(rawValue: 1 << 0)
        /// Do not put the decoded image in the memory cache.
        public static let disableMemoryCacheWrites = Options(rawValue: 1 << 1)
        /// Do not answer from the disk cache of downloaded bytes (the bytes are downloaded again).
        public static let disableDiskCacheReads = Options(rawValue: 1 << 2)
        /// Do not write the downloaded bytes to the disk cache.
        public static let disableDiskCacheWrites = Options(rawValue: 1 << 3)
        /// Answer only from the caches this request may read (memory, then any disk copy, fresh or
        /// stale), never from the network; otherwise fail with `FetchFailure.offlineMiss`. The same as
        /// ``CachePolicy/cacheOnly``.
        public static let returnCacheDataDontLoad = Options(rawValue: 1 << 4)
        /// Neither memory nor disk, read or written.
        public static let disableCaches: Options = [.disableMemoryCacheReads, .disableMemoryCacheWrites,
                                                    .disableDiskCacheReads, .disableDiskCacheWrites]
    }

    /// Where the image comes from.
    public enum Source: Sendable {
        /// A remote URL, fetched through `ImageManager`'s caches and loader; or a `file:` or `data:` URL,
        /// which `ImageManager` reads itself (no loader, no disk copy).
        case url(URL)
        /// An entity's picture in one table format. `ImageCache` fills the format's table from the
        /// entity's source; `ImageManager` fetches the entity's source URL for the format at the
        /// format's size.
        case entity(any ImageEntity, format: ImageFormat)
    }

    /// How caches may answer.
    public enum CachePolicy: Sendable, Hashable {
        /// Memory, then a fresh disk copy (revalidated when stale), then the network. The default.
        case useCache
        /// Drop the cached copies of this URL and download it again (the new bytes are cached).
        case reloadIgnoringCache
        /// Answer from memory or from any disk copy, fresh or stale; never the network. Fails with
        /// `FetchFailure.offlineMiss` when nothing is cached.
        case cacheOnly
        /// As ``useCache``, but a stale disk copy is answered at once whatever the origin's
        /// `Cache-Control` says, and revalidated in the background (a conditional request with its
        /// validators): a `304` refreshes it, a new image replaces it in the caches and is reported by
        /// ``ImageTask``'s ``ImageTask/Event/refreshed(_:)``. "Same URL, new image" without waiting.
        /// A memory-cache hit is answered as by ``useCache``, without a revalidation.
        case staleWhileRevalidate
    }

    /// Where the image comes from.
    public var source: Source
    /// The size to deliver, or `nil` for the image's own size (URL requests; an entity request uses
    /// its format's size).
    public var size: PixelSize?
    /// How the image is fitted to ``size``. Aspect fill by default, as everywhere in Tessera.
    public var contentMode: ContentMode
    /// What to make of a URL's image: size, mode, gravity (smart crop included), enlarge, background, DPR
    /// and blur, drawn once by ``/TesseraImaging/ImageDecoder/render(_:processing:limits:)`` after the
    /// download; the same vocabulary as `tessera serve`'s. When set it replaces ``size`` and ``contentMode``,
    /// and it is part of the memory cache's key, so requests that differ in any option never share an image.
    public var processing: ImageProcessing?
    /// Steps run in order on the image after its ``processing`` (or its ``size``): rounded corners, a circle,
    /// your own (``/TesseraImaging/ImageProcessor``). Their identifiers are part of the memory cache's key;
    /// requests for one URL with different processors share the download and, when nothing else differs,
    /// nothing more.
    public var processors: [ImageProcessor] = []
    /// How much the request is wanted: one of five levels, mapped onto the download lanes
    /// (``/TesseraTables/FetchPriority``).
    public var priority: FetchPriority
    /// How caches may answer.
    public var cachePolicy: CachePolicy
    /// Extra HTTP request headers (for example `Authorization`). Requests for one URL share one
    /// download: the headers of the request that starts it are the ones sent.
    public var headers: [String: String]
    /// The cache layers the request skips, and whether it may load (see ``Options``).
    public var options: Options
    /// The image's identity in the caches instead of its URL: the memory cache, the disk cache and the
    /// sharing of downloads all go by it. For presigned URLs, whose tokens change while the image does
    /// not: `ImageRequest(url: signed, cacheKey: "avatars/42")` finds what an earlier URL with another
    /// token stored. `nil` (the default): the URL is the identity.
    public var cacheKey: String?

    /// A request for the image at `url`.
    public init(url: URL, size: PixelSize? = nil, contentMode: ContentMode = .fill, processors: [ImageProcessor] = [],
                priority: FetchPriority = .urgent, cachePolicy: CachePolicy = .useCache, headers: [String: String] = [:],
                options: Options = [], cacheKey: String? = nil) {
        self.source = .url(url)
        self.size = size
        self.contentMode = contentMode
        self.processors = processors
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.headers = headers
        self.options = options
        self.cacheKey = cacheKey
    }

    /// A request for the image at `url` drawn with `processing`:
    /// `ImageRequest(url: url, processing: ImageProcessing(width: 300, mode: .fill, gravity: .smart))`.
    public init(url: URL, processing: ImageProcessing, processors: [ImageProcessor] = [], priority: FetchPriority = .urgent,
                cachePolicy: CachePolicy = .useCache, headers: [String: String] = [:], options: Options = [],
                cacheKey: String? = nil) {
        self.init(url: url, size: nil, priority: priority, cachePolicy: cachePolicy, headers: headers, options: options,
                  cacheKey: cacheKey)
        self.processing = processing
        self.processors = processors
    }

    /// A request for `entity`'s picture in `format` (its size, aspect fill).
    public init(entity: any ImageEntity, format: ImageFormat, priority: FetchPriority = .urgent,
                cachePolicy: CachePolicy = .useCache, headers: [String: String] = [:]) {
        self.source = .entity(entity, format: format)
        self.size = format.size
        self.contentMode = .fill
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.headers = headers
        self.options = []
    }

    /// The URL to fetch: the URL itself, or the entity's source URL for the format (`nil` when the
    /// entity has none).
    public var url: URL? {
        switch source {
        case .url(let url): url
        case .entity(let entity, let format): entity.sourceImageURL(for: format)
        }
    }
}
