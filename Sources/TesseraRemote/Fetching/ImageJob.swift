@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The top of a remote request's chain: the job of one decoded variant. It waits for the bytes as a
/// waiter of its ``DataJob``, takes the variant from its image table when one holds it for these bytes
/// (``FetchPipeline/image(from:for:)``), else decodes them once (within the decode limit; a disk copy that
/// does not decode is removed and the bytes asked for again, once) and stores the result in its table,
/// puts a decoded image in the memory cache (unless its requests skip memory writes; a table's answer
/// stays in the table), and passes it up to its callers through ``FetchJobs``' pool.
struct ImageJob: Sendable {
    let key: ImageJobKey
    let pipeline: FetchPipeline
    /// The bytes from the data job; `again` after a corrupt disk copy was removed.
    let bytes: @Sendable (_ again: Bool) async throws -> FetchedData

    /// The decoded variant and where its bytes came from.
    func run() async throws -> DecodedImage {
        let decoded = try await pipeline.make(from: key.data.url, bytes: bytes) { fetched in
            try await pipeline.image(from: fetched, for: key)
        }
        if key.writesMemory, let bitmap = decoded.bitmap { pipeline.memory?.insert(bitmap, for: key.image) }
        return decoded
    }
}
