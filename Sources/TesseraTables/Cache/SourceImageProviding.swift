import TesseraImaging
import Foundation

/// The role Fast Image Cache gives its delegate: supplies source images on demand.
///
/// ``ImageCache`` calls ``sourceImage(at:for:format:)`` at most once per URL at a time (concurrent
/// requests for the same URL share one call) and ``cancelSourceImage(at:)`` only when no requester
/// still needs that URL. The task running ``sourceImage(at:for:format:)`` is also cancelled then, so a
/// provider built on cancellable async work needs nothing more.
public protocol SourceImageProviding: Sendable {
    /// Loads the source image at `url`, needed by `entity` for `format`.
    func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage
    /// Called once when every requester of `url` has cancelled. The default does nothing.
    func cancelSourceImage(at url: URL)
    /// Whether one source image should fill every format of `family` for `entity`, not only the
    /// requested ones. The default is `true`.
    func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool
}

extension SourceImageProviding {
    /// Does nothing.
    public func cancelSourceImage(at url: URL) {}
    /// `true`.
    public func shouldProcessAllFormats(inFamily family: String, for entity: any ImageEntity) -> Bool { true }
}
