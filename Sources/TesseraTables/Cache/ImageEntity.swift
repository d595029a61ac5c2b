import TesseraImaging
import Foundation

/// A model object whose picture Tessera caches: a user, a photo, a product.
///
/// The entity identifies its entry in every image table (``entityID``, which should never change),
/// says which source picture it currently has (``sourceImageID``, which changes when the picture
/// does: a changed id makes the cached entry a miss), where that source is for each format, and how
/// to draw the source into a format's slot (rounded corners, overlays…).
///
/// Derive both ids from your own identifiers with `UUID(hashing:)` once, when the
/// identifier is set (a `let` property), not in every call: hashing costs time on the hot path.
public protocol ImageEntity: Sendable {
    /// The stable identity of this entity in the image tables.
    var entityID: UUID { get }
    /// The identity of the current source image; a new value invalidates cached entries.
    var sourceImageID: UUID { get }
    /// Where the source image for `format` is. Requests for the same URL are coalesced.
    func sourceImageURL(for format: ImageFormat) -> URL?
    /// Draws the upright, decoded `source` into `context`, which covers one slot of `format`'s table.
    /// The default clears the slot and draws the source with ``/TesseraImaging/ContentMode/fill``.
    func draw(_ source: Bitmap, in context: DrawingContext, for format: ImageFormat) throws
}

extension ImageEntity {
    /// Clears the slot and draws `source` filling it (aspect fill, cropped, centred).
    public func draw(_ source: Bitmap, in context: DrawingContext, for format: ImageFormat) throws {
        context.clear()
        try context.draw(source, in: context.bounds, mode: .fill)
    }
}
