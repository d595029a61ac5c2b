@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The top of a remote request's chain: the job of one decoded variant. It waits for the bytes as a
/// waiter of its ``DataJob``, decodes them once (within the decode limit; a disk copy that does not
/// decode is removed and the bytes asked for again, once), puts the image in the memory cache (unless
/// its requests skip memory writes), and passes it up to its callers through ``FetchJobs``' pool.
struct ImageJob: Sendable {
    let key: ImageJobKey
    let pipeline: FetchPipeline
    /// The bytes from the data job; `again` after a corrupt disk copy was removed.
    let bytes: @Sendable (_ again: Bool) async throws -> FetchedData

    /// The decoded variant and where its bytes came from.
    func run() async throws -> DecodedImage {
        let decoded = try await pipeline.make(from: key.data.url, bytes: bytes) { fetched in
            try await pipeline.decoded(fetched, for: key.image)
        }
        if key.writesMemory { pipeline.memory?.insert(decoded.image, for: key.image) }
        return decoded
    }
}
