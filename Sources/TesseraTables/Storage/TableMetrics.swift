import CoreMetrics
import Metrics
import TesseraImaging

/// The metrics of one ``ImageTable``, made once when it opens, each labelled `format=<name>`
/// (docs/OBSERVABILITY.md). A hit costs one counter increment: a call into the backend, nothing
/// with the default no-op backend but the call itself.
struct TableMetrics: Sendable {
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
