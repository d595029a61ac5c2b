import TesseraImaging
import TesseraTables
import Foundation

/// What an ``ImageManager`` answers a request with: the image, and where it came from.
///
/// ```swift
/// let response = try await manager.imageTask(for: ImageRequest(url: url)).response
/// if response.cacheType == .network { print(response.statusCode ?? 0, response.headers["etag"] ?? "") }
/// ```
public struct ImageResponse: Sendable {
    /// Where an answer came from.
    public enum CacheType: String, Sendable, Hashable, Codable, CaseIterable {
        /// The memory cache of decoded images: nothing was read or decoded.
        case memory
        /// A disk copy of the downloaded bytes, decoded: fresh, stale when offline or cache-only, or
        /// revalidated with a `304` (then ``statusCode`` is 304).
        case disk
        /// A download, decoded.
        case network
        /// An image table: the pixels of a table entry, neither read nor decoded.
        case table
        /// A `file:` or `data:` URL, read without the network and without the caches' bytes.
        case local
    }

    /// The image, at the request's size and processing.
    public var image: Bitmap
    /// The request answered.
    public var request: ImageRequest
    /// Where the answer came from.
    public var cacheType: CacheType
    /// The file format of the encoded bytes the image was decoded from; `nil` when the memory cache or a
    /// table answered (they keep pixels, not the file).
    public var sourceFormat: ImageFileFormat?
    /// The HTTP status when the answer involved the network: the download's (2xx), or 304 for a disk copy
    /// revalidated; otherwise `nil`.
    public var statusCode: Int?
    /// The HTTP response headers (names lower-cased) when the answer involved the network; otherwise empty.
    public var headers: [String: String]
    /// The URL that answered (after redirects) when the answer involved the network; otherwise `nil`.
    public var url: URL?

    /// Creates a response.
    public init(image: Bitmap, request: ImageRequest, cacheType: CacheType, sourceFormat: ImageFileFormat? = nil,
                statusCode: Int? = nil, headers: [String: String] = [:], url: URL? = nil) {
        self.image = image
        self.request = request
        self.cacheType = cacheType
        self.sourceFormat = sourceFormat
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }
}
