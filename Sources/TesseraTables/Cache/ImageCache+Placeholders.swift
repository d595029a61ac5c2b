import TesseraImaging

extension ImageCache {
    /// The ThumbHash of the entity's image in `format`, for its current source image, answered from the
    /// table without reading the pixels; `nil` when the image is not cached or the format does not
    /// ``ImageFormat/storesThumbHash``. Decode it with ``/TesseraImaging/ThumbHash/placeholder()`` (a blurred
    /// image of at most 32 pixels a side) and show it stretched while the image itself loads:
    ///
    /// ```swift
    /// if let image = cache.cachedImage(for: user, format: avatars) {
    ///     show(image)
    /// } else {
    ///     if let hash = cache.cachedPlaceholder(for: user, format: avatars) { show(hash.placeholder()) }
    ///     show(try await cache.image(for: user, format: avatars))
    /// }
    /// ```
    ///
    /// The placeholder outlives nothing it shouldn't: it is stored and evicted with the entry, and a new
    /// source image replaces both.
    public func cachedPlaceholder(for entity: some ImageEntity, format: ImageFormat) -> ThumbHash? {
        table(for: format)?.thumbHash(for: entity.entityID, sourceID: entity.sourceImageID)
    }
}
