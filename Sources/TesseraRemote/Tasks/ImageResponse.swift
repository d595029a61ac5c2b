import TesseraImaging
import TesseraTables
import Foundation

/// What an ``ImageManager`` answers a request with: the image, and where it came from.
///
/// ```swift
/// let response = try await manager.imageTask(for: ImageRequest(url: url)).response
/// if response.cacheType == .network { print(response.statusCode ?? 0, response.headers["etag"] ?? "") }
/// ```
///
/// The pixels are ``pixels``: a decoded `Bitmap`, or for an answer from an image table
/// (``ImageManager/Configuration/tables``, ``CacheType/table``) a ``/TesseraTables/TableImage`` that points into the
/// table's memory mapping, handed out without a copy. ``image`` is always a `Bitmap`: for a table's answer
/// each read of it copies the pixels (``ImageManager/image(for:progress:)`` returns that copy); read
/// ``pixels`` or ``tableImage`` to keep the answer zero-copy.
public struct ImageResponse: Sendable {
    /// Where an answer came from.
    public enum CacheType: String, Sendable, Hashable, Codable, CaseIterable {
        /// The memory cache of decoded images: nothing was read or decoded.
        case memory
        /// A disk copy of the downloaded bytes, decoded: fresh, stale when offline or cache-only, stale
        /// within the origin's `stale-while-revalidate` or `stale-if-error` (or under
        /// ``ImageRequest/CachePolicy/staleWhileRevalidate``), or revalidated with a `304` (then
        /// ``statusCode`` is 304).
        case disk
        /// A download, decoded.
        case network
        /// An image table: the pixels of a table entry, neither read nor decoded.
        case table
        /// A `file:` or `data:` URL, read without the network and without the caches' bytes.
        case local
    }

    /// The image, at the request's size and processing, as it was answered: a `Bitmap`, or the
    /// ``/TesseraTables/TableImage`` of a table's answer (no copy).
    public var pixels: any BitmapImage
    /// The image as a `Bitmap`: ``pixels`` itself when decoded, a copy of them for a table's answer (made on
    /// every read; keep it, or use ``pixels``). Setting it replaces ``pixels``.
    public var image: Bitmap {
        get { pixels as? Bitmap ?? Self.copy(pixels) }
        set { pixels = newValue }
    }
    /// The table entry of a table's answer (``CacheType/table``); `nil` otherwise.
    public var tableImage: TableImage? { pixels as? TableImage }
    /// The request answered.
    public var request: ImageRequest
    /// Where the answer came from.
    public var cacheType: CacheType
    /// The file format of the encoded bytes the image was made from (for a table's answer, the bytes whose
    /// digest found the entry); `nil` when no bytes were read: a memory-cache answer, or a table's answer
    /// in the process that already knows the entry's source (both keep pixels, not the file).
    public var sourceFormat: ImageFileFormat?
    /// The HTTP status when the answer involved the network: the download's (2xx), or 304 for a disk copy
    /// revalidated; otherwise `nil`.
    public var statusCode: Int?
    /// The HTTP response headers (names lower-cased) when the answer involved the network; otherwise empty.
    public var headers: [String: String]
    /// The URL that answered (after redirects) when the answer involved the network; otherwise `nil`.
    public var url: URL?

    /// Creates a response with a decoded image.
    public init(image: Bitmap, request: ImageRequest, cacheType: CacheType, sourceFormat: ImageFileFormat? = nil,
                statusCode: Int? = nil, headers: [String: String] = [:], url: URL? = nil) {
        self.init(pixels: image, request: request, cacheType: cacheType, sourceFormat: sourceFormat, statusCode: statusCode,
                  headers: headers, url: url)
    }

    /// Creates a response with any image: a `Bitmap`, a ``/TesseraTables/TableImage``, your own.
    public init(pixels: any BitmapImage, request: ImageRequest, cacheType: CacheType, sourceFormat: ImageFileFormat? = nil,
                statusCode: Int? = nil, headers: [String: String] = [:], url: URL? = nil) {
        self.pixels = pixels
        self.request = request
        self.cacheType = cacheType
        self.sourceFormat = sourceFormat
        self.statusCode = statusCode
        self.headers = headers
        self.url = url
    }

    /// A `Bitmap` with the pixels of `image` (same layout, row padding included).
    private static func copy(_ image: any BitmapImage) -> Bitmap {
        let layout = image.layout
        return Bitmap(layout: layout) { view in
            image.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { view.baseAddress.copyMemory(from: base, byteCount: layout.byteCount) }
            }
        }
    }
}
