import CoreMetrics
import Metrics
import TesseraImaging

/// The metrics of one ``ImageTable``, made once when it opens, each labelled `format=<name>`
/// (docs/OBSERVABILITY.md).
///
/// Hits are the hot path (about 100 ns each), so they are not handed to the backend one by one: a hit
/// adds 1 to ``TableState/unpublishedHits`` under the lock the lookup holds anyway, and the hits
/// counter receives the sum at the next miss or store, once ``hitBatch`` hits have gathered, and when
/// the table closes. The counter is therefore at most ``hitBatch`` − 1 hits behind, and exact after
/// any miss or store; every other metric is reported as it happens.
struct TableMetrics: Sendable {
    /// Hits gathered before they are handed to the backend without waiting for a miss or a store.
    static let hitBatch = 1024

    /// `tessera_image_table_hits_total`: lookups answered with an image.
    let hits: Counter
    /// `tessera_image_table_misses_total`: lookups answered `nil` (absent, another source, damaged).
    let misses: Counter
    /// `tessera_image_table_stores_total`: entries stored.
    let stores: Counter
    /// `tessera_image_table_evictions_total`: least recently used entries evicted by stores.
    let evictions: Counter
    /// `tessera_image_table_store_seconds`: one store, reservation to commit (drawing included).
    let storeTime: CoreMetrics.Timer

    init(format: String, observability: Observability) {
        let dimensions = [("format", format)]
        hits = observability.counter("tessera_image_table_hits_total", dimensions: dimensions)
        misses = observability.counter("tessera_image_table_misses_total", dimensions: dimensions)
        stores = observability.counter("tessera_image_table_stores_total", dimensions: dimensions)
        evictions = observability.counter("tessera_image_table_evictions_total", dimensions: dimensions)
        storeTime = observability.timer("tessera_image_table_store_seconds", dimensions: dimensions)
    }
}

extension TableState {
    /// The hits not yet handed to the metrics backend, which start again from zero.
    mutating func takeUnpublishedHits() -> Int {
        defer { unpublishedHits = 0 }
        return unpublishedHits
    }
}
