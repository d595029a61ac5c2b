import TesseraImaging
import TesseraTables
import Foundation

/// What ``ImageManager/dataResponse(for:priority:progress:)`` returns: the encoded bytes of a URL, their
/// entity tag and modification time, and which layer answered.
///
/// The entity tag is the server's validator for exactly these bytes (from the download, from the `304`
/// that confirmed a disk copy, or from the disk copy's stored validators), so two answers with the same
/// tag hold the same bytes without hashing them.
public struct DataResponse: Sendable {
    /// The body, as downloaded (the image's header was checked; nothing was decoded).
    public var data: Data
    /// The `ETag` as the server sent it (quotes included); `nil` for `file:` and `data:` URLs and servers
    /// that send none.
    public var etag: String?
    /// ``ImageResponse/CacheType/disk`` (a fresh or revalidated disk copy), ``ImageResponse/CacheType/network``
    /// (a download) or ``ImageResponse/CacheType/local``.
    public var cacheType: ImageResponse.CacheType
    /// The `Last-Modified` as the server sent it (kept with the disk copy); `nil` for `file:` and `data:`
    /// URLs and servers that send none.
    public var lastModified: String?

    /// A response.
    public init(data: Data, etag: String? = nil, cacheType: ImageResponse.CacheType, lastModified: String? = nil) {
        self.data = data
        self.etag = etag
        self.cacheType = cacheType
        self.lastModified = lastModified
    }
}
