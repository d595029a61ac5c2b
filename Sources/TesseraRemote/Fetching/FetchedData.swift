import TesseraImaging
import TesseraTables
import Foundation

/// What a data job hands its waiters: the bytes of a URL and where they came from (a disk copy may be
/// corrupt: whoever fails to decode it removes it and asks for the bytes again, once).
struct FetchedData: Sendable {
    var data: Data
    /// ``ImageResponse/CacheType/disk``, ``ImageResponse/CacheType/network`` or ``ImageResponse/CacheType/local``.
    var cacheType: ImageResponse.CacheType
    /// The HTTP response (its body left out) when the network was asked: a download, or a `304`.
    var response: LoadResponse?
    /// The bytes' entity tag, as the server sent it: from the download, the `304`, or the disk copy's
    /// validators; `nil` for a local URL or a server that sends none.
    var etag: String? = nil
    /// The bytes' `Last-Modified`, as the server sent it (the download's, or the disk copy's stored one);
    /// `nil` for a local URL or a server that sends none.
    var lastModified: String? = nil
    /// A stale disk copy answered at once: its job's requesters revalidate it in the background.
    var needsRevalidation = false

    var fromDisk: Bool { cacheType == .disk }
}

/// What an image job hands its callers: the variant, decoded (a `Bitmap`) or from a table (a `TableImage`),
/// and where its bytes came from.
struct DecodedImage: Sendable {
    var pixels: any BitmapImage
    var cacheType: ImageResponse.CacheType
    var sourceFormat: ImageFileFormat?
    var response: LoadResponse?
    /// Made from a stale disk copy answered at once (``FetchedData/needsRevalidation``).
    var needsRevalidation = false

    /// The decoded image; `nil` for a table's answer.
    var bitmap: Bitmap? { pixels as? Bitmap }

    /// The answer to `request`.
    func response(to request: ImageRequest) -> ImageResponse {
        ImageResponse(pixels: pixels, request: request, cacheType: cacheType, sourceFormat: sourceFormat,
                      statusCode: response?.statusCode, headers: response?.headers ?? [:], url: response?.url)
    }
}
