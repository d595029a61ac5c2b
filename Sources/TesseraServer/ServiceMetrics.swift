#if Serving
import CoreMetrics
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging

/// The service's metrics, made on one factory (the server's Prometheus registry, or the global one).
///
/// A class, so that reading one metric through the service retains the one object, not each of the fifteen
/// references a copy of a struct would (every memory hit reads several).
final class ServiceMetrics: Sendable {
    let factory: any MetricsFactory
    let tableHits: Counter
    let tableMisses: Counter
    let bytesServed: Counter
    let downloadTime: CoreMetrics.Timer
    let decodeTime: CoreMetrics.Timer
    let encodeTime: CoreMetrics.Timer
    let inFlight: Meter
    /// Bytes held by the encoded-response memory cache (grows to its capacity, then stays there).
    let responseCacheBytes: Meter
    /// Decodes and encodes running in a decode slot, and requests waiting for one.
    let decodesRunning: Meter
    let decodesWaiting: Meter
    /// `tessera_requests_total` by status and preset, made once each: statuses are few and presets are the
    /// configured names plus `resize` and `unknown`, so this stays small.
    private let requestCounters = LockedValue([RequestKey: Counter]())
    /// `tessera_http_request_duration_seconds` (a histogram) by route and status (the key
    /// `route index × 1000 + status`, no string made per request), made once each: routes are a fixed set
    /// (``Route``) and statuses few.
    private let durations = LockedValue([Int: CoreMetrics.Timer]())
    /// `tessera_serve_cache_outcomes_total` by outcome, made once.
    private let outcomes: [CacheOutcome: Counter]

    /// The `route` label of `tessera_http_request_duration_seconds`.
    enum Route: String, Sendable, CaseIterable {
        /// `/v1/{preset}/…`.
        case preset
        /// `/v1/resize`.
        case resize
        /// An imgproxy URL (`--imgproxy-prefix`).
        case imgproxy
        /// A thumbor URL (`--thumbor-prefix`).
        case thumbor
        /// `/healthz`.
        case healthz
        /// `/metrics`.
        case metrics
        /// `/gallery…`.
        case gallery
        /// `/admin/…`.
        case admin
        /// Anything else (404s included).
        case other

        /// Whether the route answers images (the in-flight gauge and the requests counter count it).
        var isImage: Bool { self == .preset || self == .resize || self == .imgproxy || self == .thumbor }
    }

    init(factory: any MetricsFactory) {
        self.factory = factory
        tableHits = Counter(label: "tessera_table_hits_total", factory: factory)
        tableMisses = Counter(label: "tessera_table_misses_total", factory: factory)
        bytesServed = Counter(label: "tessera_bytes_served_total", factory: factory)
        downloadTime = CoreMetrics.Timer(label: "tessera_download_seconds", factory: factory)
        decodeTime = CoreMetrics.Timer(label: "tessera_decode_seconds", factory: factory)
        encodeTime = CoreMetrics.Timer(label: "tessera_encode_seconds", factory: factory)
        inFlight = Meter(label: "tessera_requests_in_flight", factory: factory)
        responseCacheBytes = Meter(label: "tessera_response_cache_bytes", factory: factory)
        decodesRunning = Meter(label: "tessera_decodes_running", factory: factory)
        decodesWaiting = Meter(label: "tessera_decodes_waiting", factory: factory)
        var outcomes: [CacheOutcome: Counter] = [:]
        for outcome in CacheOutcome.allCases where outcome != .notModified {
            outcomes[outcome] = Counter(label: "tessera_serve_cache_outcomes_total", dimensions: [("outcome", outcome.rawValue)], factory: factory)
        }
        self.outcomes = outcomes
    }

    /// What one finished request adds to: its duration's histogram and, for an image route, its requests
    /// counter.
    struct Recorders: Sendable {
        let duration: CoreMetrics.Timer
        let requests: Counter?
    }

    /// The ``Recorders`` of a request of `route` answered with `status`; `preset`: the requests counter's
    /// preset label, `nil` for a route that does not answer images.
    func recorders(route: Route, status: Int, preset: String?) -> Recorders {
        Recorders(duration: durationTimer(route: route, status: status),
                  requests: preset.map { requestCounter(status: status, preset: $0) })
    }

    /// The key of a `tessera_requests_total` counter (hashing it makes no string).
    private struct RequestKey: Hashable {
        let status: Int
        let preset: String
    }

    /// Counts one image answer by where it came from (a `304` is not counted).
    func outcome(_ outcome: CacheOutcome) {
        outcomes[outcome]?.increment()
    }

    /// The histogram a request of `route` answered with `status` records its duration into.
    private func durationTimer(route: Route, status: Int) -> CoreMetrics.Timer {
        let key = (Route.allCases.firstIndex(of: route) ?? 0) * 1000 + status
        return durations.withLock { timers in
            if let known = timers[key] { return known }
            let made = CoreMetrics.Timer(label: "tessera_http_request_duration_seconds",
                                         dimensions: [("route", route.rawValue), ("status", String(status))], factory: factory)
            timers[key] = made
            return made
        }
    }

    /// The counter of finished requests answered with `status` for `preset`.
    private func requestCounter(status: Int, preset: String) -> Counter {
        let key = RequestKey(status: status, preset: preset)
        return requestCounters.withLock { counters in
            if let known = counters[key] { return known }
            let made = Counter(label: "tessera_requests_total", dimensions: [("status", String(status)), ("preset", preset)], factory: factory)
            counters[key] = made
            return made
        }
    }
}
#endif
