import Foundation
import TesseraImaging

/// One request for an image, as a value: where it comes from, the size and content mode it is wanted
/// at, its priority, how caches may answer it, and extra HTTP headers. `ImageManager` takes it for
/// `image`, `loadImage`, `prefetch` and `cachedImage`; `ImageCache` takes entity requests.
///
/// ```swift
/// let thumb = ImageRequest(url: url, size: PixelSize(width: 100, height: 100))          // aspect fill
/// let fresh = ImageRequest(url: url, cachePolicy: .reloadIgnoringCache,
///                          headers: ["Authorization": "Bearer \(token)"])
/// let avatar = ImageRequest(entity: user, format: small)                                 // for ImageCache
/// ```
public struct ImageRequest: Sendable {
    /// Where the image comes from.
    public enum Source: Sendable {
        /// A remote (or `file:`) URL, fetched through `ImageManager`'s caches and loader.
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
    /// The download lane.
    public var priority: FetchPriority
    /// How caches may answer.
    public var cachePolicy: CachePolicy
    /// Extra HTTP request headers (for example `Authorization`). Requests for one URL share one
    /// download: the headers of the request that starts it are the ones sent.
    public var headers: [String: String]

    /// A request for the image at `url`.
    public init(url: URL, size: PixelSize? = nil, contentMode: ContentMode = .aspectFill, priority: FetchPriority = .urgent,
                cachePolicy: CachePolicy = .useCache, headers: [String: String] = [:]) {
        self.source = .url(url)
        self.size = size
        self.contentMode = contentMode
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.headers = headers
    }

    /// A request for the image at `url` drawn with `processing`:
    /// `ImageRequest(url: url, processing: ImageProcessing(width: 300, mode: .fill, gravity: .smart))`.
    public init(url: URL, processing: ImageProcessing, priority: FetchPriority = .urgent,
                cachePolicy: CachePolicy = .useCache, headers: [String: String] = [:]) {
        self.init(url: url, size: nil, priority: priority, cachePolicy: cachePolicy, headers: headers)
        self.processing = processing
    }

    /// A request for `entity`'s picture in `format` (its size, aspect fill).
    public init(entity: any ImageEntity, format: ImageFormat, priority: FetchPriority = .urgent,
                cachePolicy: CachePolicy = .useCache, headers: [String: String] = [:]) {
        self.source = .entity(entity, format: format)
        self.size = format.size
        self.contentMode = .aspectFill
        self.priority = priority
        self.cachePolicy = cachePolicy
        self.headers = headers
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
