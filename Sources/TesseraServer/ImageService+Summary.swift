#if Serving
import Foundation
import Tessera

extension ImageService {
    /// What `GET /v1/{preset}/{path}?info` answers, as JSON: the size and format of the image the same URL
    /// without `info` serves, and its ThumbHash (base64), which a page paints at once while the image loads.
    public struct ImageSummary: Sendable, Hashable, Codable {
        /// The served image's width in pixels.
        public var width: Int
        /// The served image's height in pixels.
        public var height: Int
        /// The served image's format for the request's `Accept`: `jpeg`, `png`, `webp` or `avif`.
        public var format: String
        /// The ThumbHash of the served image's pixels, base64 (standard alphabet, padded).
        public var thumbHash: String
        /// The `Cache-Control` of the image's own answer (a partial decode is cached briefly).
        var cacheControl = ""

        private enum CodingKeys: String, CodingKey { case width, height, format, thumbHash }

        /// A summary of an image of `width` × `height` in `format` with `thumbHash` (base64).
        public init(width: Int, height: Int, format: String, thumbHash: String) {
            self.width = width
            self.height = height
            self.format = format
            self.thumbHash = thumbHash
        }
    }

    /// The summary of the image `info` asks for (its `info` parameter ignored): the image comes from the
    /// one request path (memory, table or a fill, exactly as the image URL would), then its encoded bytes
    /// are decoded (the thumbnail, not the source) and hashed. Errors are the image's own.
    public func summary(of info: RequestInfo) async throws(ServiceError) -> ImageSummary {
        var plain = info
        plain.query["info"] = nil
        plain.ifNoneMatch = nil
        let image = try await respond(to: plain)
        let decoded: Bitmap, hash: ThumbHash
        do {
            decoded = try decoder.decode(Data(image.body))
            hash = try ThumbHash(image: decoded)
        } catch {
            throw ServiceError(.internal, "the served image could not be summarised: \(error)")
        }
        let format = image.contentType.hasPrefix("image/") ? String(image.contentType.dropFirst(6)) : image.contentType
        var summary = ImageSummary(width: decoded.width, height: decoded.height, format: format, thumbHash: hash.base64)
        summary.cacheControl = image.cacheControl
        return summary
    }

    /// Whether a request asks for the summary rather than the image (a query parameter `info`, any value).
    static func wantsSummary(_ info: RequestInfo) -> Bool { info.query["info"] != nil }
}
#endif
