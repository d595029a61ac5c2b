#if Serving
import CoreMetrics
import Foundation
import Metrics

/// The service's metrics, made on one factory (the server's Prometheus registry, or the global one).
struct ServiceMetrics: Sendable {
    let factory: any MetricsFactory
    let tableHits: Counter
    let tableMisses: Counter
    let bytesServed: Counter
    let downloadTime: CoreMetrics.Timer
    let decodeTime: CoreMetrics.Timer
    let encodeTime: CoreMetrics.Timer
    let inFlight: Meter

    init(factory: any MetricsFactory) {
        self.factory = factory
        tableHits = Counter(label: "tessera_table_hits_total", factory: factory)
        tableMisses = Counter(label: "tessera_table_misses_total", factory: factory)
        bytesServed = Counter(label: "tessera_bytes_served_total", factory: factory)
        downloadTime = CoreMetrics.Timer(label: "tessera_download_seconds", factory: factory)
        decodeTime = CoreMetrics.Timer(label: "tessera_decode_seconds", factory: factory)
        encodeTime = CoreMetrics.Timer(label: "tessera_encode_seconds", factory: factory)
        inFlight = Meter(label: "tessera_requests_in_flight", factory: factory)
    }

    /// Counts one finished request by status and preset.
    func request(status: Int, preset: String) {
        Counter(label: "tessera_requests_total", dimensions: [("status", String(status)), ("preset", preset)], factory: factory).increment()
    }
}
#endif
