import TesseraImaging
import TesseraTables

// `ImageRequest` is the remote layer's (its HTTP headers, cache policy and options are for fetching), so
// the image cache takes requests here; the tables layer knows entities, formats and priorities only.
extension ImageCache {
    /// The image an entity request asks for: ``/TesseraTables/ImageCache/image(for:format:priority:)`` with
    /// the request's entity, format and priority.
    /// - Throws: ``/TesseraCore/CacheFailure/notAnEntityRequest(url:)`` for a URL request,
    ///   ``/TesseraCore/CacheFailure/unknownFormat(_:)`` for a format this cache does not have, and whatever
    ///   ``/TesseraTables/ImageCache/image(for:format:priority:)`` throws.
    public func image(for request: ImageRequest) async throws(TesseraError) -> TableImage {
        guard case .entity(let entity, let format) = request.source else {
            throw TesseraError(.cache(.notAnEntityRequest(url: request.url?.absoluteString ?? "")))
        }
        return try await image(for: entity, format: format, priority: request.priority)
    }

    /// The cached image of an entity request, or `nil` (no I/O, no decoding).
    public func cachedImage(for request: ImageRequest) -> TableImage? {
        guard case .entity(let entity, let format) = request.source else { return nil }
        return cachedImage(for: entity, format: format)
    }
}
