import CoreMetrics
import Metrics
import TesseraImaging

/// The metrics of one ``ImageManager``, made once when it is created (docs/OBSERVABILITY.md).
struct RemoteMetrics: Sendable {
    /// `tessera_remote_memory_hits_total` / `_misses_total`: requests answered (or not) by the memory cache.
    let memoryHits: Counter
    let memoryMisses: Counter
    /// `tessera_remote_disk_hits_total` / `_misses_total`: jobs answered (or not) by a usable disk copy.
    let diskHits: Counter
    let diskMisses: Counter
    /// `tessera_remote_downloads_total`: loads handed to the loader (a retry after `401` is a second one).
    let downloads: Counter
    /// `tessera_remote_download_bytes_total`: body bytes received by successful loads.
    let downloadBytes: Counter
    /// `tessera_remote_download_failures_total`: loads that failed (cancellation excluded).
    let downloadFailures: Counter
    /// `tessera_remote_download_seconds`: one load, request to last body byte.
    let downloadTime: CoreMetrics.Timer
    /// `tessera_remote_decode_seconds`: decoding one variant.
    let decodeTime: CoreMetrics.Timer

    init(observability: Observability) {
        memoryHits = observability.counter("tessera_remote_memory_hits_total")
        memoryMisses = observability.counter("tessera_remote_memory_misses_total")
        diskHits = observability.counter("tessera_remote_disk_hits_total")
        diskMisses = observability.counter("tessera_remote_disk_misses_total")
        downloads = observability.counter("tessera_remote_downloads_total")
        downloadBytes = observability.counter("tessera_remote_download_bytes_total")
        downloadFailures = observability.counter("tessera_remote_download_failures_total")
        downloadTime = observability.timer("tessera_remote_download_seconds")
        decodeTime = observability.timer("tessera_remote_decode_seconds")
    }
}
