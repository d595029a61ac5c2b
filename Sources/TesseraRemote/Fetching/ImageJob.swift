@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The top of a remote request's chain: the job of one decoded variant. It waits for the URL's bytes
/// as a waiter of the URL's ``DataJob``, decodes them once (within the decode limit; a disk copy that
/// does not decode is removed and the bytes asked for again, once), puts the image in the memory cache,
/// and passes it up to its callers through ``FetchJobs``' pool.
struct ImageJob: Sendable {
    let key: ImageKey
    let pipeline: FetchPipeline
    /// The URL's bytes from its data job; `again` after a corrupt disk copy was removed.
    let bytes: @Sendable (_ again: Bool) async throws -> FetchedData

    /// The decoded variant.
    func run() async throws -> Bitmap {
        let image = try await pipeline.make(from: key.url, bytes: bytes) { data in try await pipeline.decoded(data, for: key) }
        pipeline.memory?.insert(image, for: key)
        return image
    }
}
