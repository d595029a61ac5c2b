import Foundation
import TesseraImaging

/// The same operations as the name-based ones, addressed by the ``ImageFormat`` value itself: a typed
/// handle, so a misspelt name cannot silently miss. A format this cache was not made with (or one with
/// the same name but another definition) is unknown: lookups answer `nil`, loads throw
/// ``CacheFailure/unknownFormat(_:)``.
extension ImageCache {
    /// Whether this cache was made with exactly `format`.
    public func isConfigured(_ format: ImageFormat) -> Bool { formats[format.name] == format }

    /// The cached image, or `nil` (also for an unknown format). Never waits for I/O or decodes.
    public func cachedImage(for entity: some ImageEntity, format: ImageFormat) -> TableImage? {
        isConfigured(format) ? cachedImage(for: entity, format: format.name) : nil
    }

    /// Whether the image is cached for the entity's current source image.
    public func imageExists(for entity: some ImageEntity, format: ImageFormat) -> Bool {
        isConfigured(format) && imageExists(for: entity, format: format.name)
    }

    /// The image, loading the source on a miss (as the name-based `image(for:format:)`).
    public func image(for entity: some ImageEntity, format: ImageFormat) async throws(TesseraError) -> TableImage {
        try checkConfigured(format)
        return try await image(for: entity, format: format.name)
    }

    /// Callback form of `image(for:format:)` with a format handle; an unknown format completes with
    /// ``CacheFailure/unknownFormat(_:)``.
    @discardableResult
    public func loadImage(for entity: some ImageEntity, format: ImageFormat,
                          completion: @escaping @Sendable (Result<TableImage, TesseraError>) -> Void) -> RequestTicket {
        guard isConfigured(format) else {
            return RequestTicket(task: Task.detached { completion(.failure(TesseraError(.cache(.unknownFormat(format.name))))) })
        }
        return loadImage(for: entity, format: format.name, completion: completion)
    }

    /// Cancels every pending request of `entity` for `format`.
    public func cancelRequest(for entity: some ImageEntity, format: ImageFormat) {
        cancelRequest(for: entity, format: format.name)
    }

    /// Stores an image obtained elsewhere, drawn by the entity into `format`'s slot.
    @discardableResult
    public func setImage(_ image: Bitmap, for entity: some ImageEntity, format: ImageFormat) throws -> TableImage {
        try checkConfigured(format)
        return try setImage(image, for: entity, format: format.name)
    }

    /// Removes the entity's image in `format`.
    public func deleteImage(for entity: some ImageEntity, format: ImageFormat) {
        if isConfigured(format) { deleteImage(for: entity, format: format.name) }
    }

    private func checkConfigured(_ format: ImageFormat) throws(TesseraError) {
        guard isConfigured(format) else { throw TesseraError(.cache(.unknownFormat(format.name))) }
    }
}
