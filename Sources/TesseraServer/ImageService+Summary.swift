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
    /// one request path (memory, table or a fill, exactly as the image URL would). A preset's image of a
    /// file is then summarised from its table slot, the pixels before encoding (no decode); any other
    /// image (a resize, an object, one too tall for its slots) by decoding the encoded answer. Errors are
    /// the image's own.
    public func summary(of info: RequestInfo) async throws(ServiceError) -> ImageSummary {
        var plain = info
        plain.query["info"] = nil
        plain.ifNoneMatch = nil
        plain.ifModifiedSince = nil
        let image = try await respond(to: plain)
        let size: PixelSize, hash: ThumbHash
        do {
            if let request = try? resolve(plain, trustingRecentCheck: true), let slot = slotView(of: request) {
                size = slot.layout.size
                hash = try ThumbHash(image: slot)
            } else {
                let decoded = try decoder.decode(Data(image.body))
                size = decoded.layout.size
                hash = try ThumbHash(image: decoded)
            }
        } catch {
            throw ServiceError(.internal, "the served image could not be summarised: \(error)")
        }
        let format = ImageFileFormat(mediaType: image.contentType)?.rawValue ?? image.contentType
        var summary = ImageSummary(width: size.width, height: size.height, format: format, thumbHash: hash.base64)
        summary.cacheControl = image.cacheControl
        return summary
    }

    /// The table slot a preset request of a file reads, when its table holds it.
    func slotView(of request: ServeRequest) -> SlotView? {
        guard let table = request.preset, let file = request.file else { return nil }
        return table.image(of: PresetTable.Source(file))
    }

    /// Whether a request asks for the summary rather than the image (a query parameter `info`, any value).
    static func wantsSummary(_ info: RequestInfo) -> Bool { info.query["info"] != nil }
}
#endif
