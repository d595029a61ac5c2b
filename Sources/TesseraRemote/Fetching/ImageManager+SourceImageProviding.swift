import TesseraImaging
import TesseraTables
import Foundation

/// ``ImageManager`` as the source-image provider of an ``/TesseraTables/ImageCache``: the image tables get their
/// sources through the manager's disk cache and lanes, at the level of the cache's request
/// (``/TesseraTables/FetchPriority/ofCurrentRequest``), as encoded bytes that the
/// image cache decodes once for all its formats. The manager neither decodes them nor keeps them in
/// its memory cache: the tables are the memory.
extension ImageManager: SourceImageProviding {
    /// The bytes at `url` as ``/TesseraTables/SourceImage/encoded(_:)``, from ``data(for:priority:progress:)``
    /// at ``/TesseraTables/FetchPriority/ofCurrentRequest``.
    public func sourceImage(at url: URL, for entity: any ImageEntity, format: ImageFormat) async throws -> SourceImage {
        .encoded(try await data(for: url, priority: FetchPriority.ofCurrentRequest))
    }
}
