import ArgumentParser
import CHeapControl
import Foundation
import Logging
import Prometheus
@_spi(Internal) import TesseraImaging
import TesseraServer

/// `tessera serve --root DIR [--listen 127.0.0.1:8080] [--preset NAME:WxH:MODE …] [--config FILE]`: the image
/// service (docs/SERVING.md). Settings come from the config file, then `TESSERA_…` variables, then flags,
/// each overriding the one before.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve images from a directory in named presets and ad-hoc sizes, with the cache built in."
    )

    @Option(help: "The directory of images served under /v1/ (TESSERA_ROOT).") var root: String?
    @Option(help: "HOST:PORT to listen on (TESSERA_LISTEN; default 127.0.0.1:8080).") var listen: String?
    @Option(name: .customLong("preset"), help: "A preset NAME:WxH:MODE (MODE fit, fill, fill-down, force or pad; Wx or xH for one side; full recipes in --config); repeatable (TESSERA_PRESETS, comma-separated; default thumb:200x200:fill and lowres:40x40:fill).")
    var presets: [String] = []
    @Option(help: "A JSON config file (TESSERA_CONFIG).") var config: String?
    @Option(name: .customLong("tables"),
            help: "Directory of the image tables (TESSERA_TABLES; default $XDG_CACHE_HOME/tessera/serve/ROOTNAME-HASH, else ~/.cache/…, one per root, kept across restarts).")
    var tablesDirectory: String?
    @Option(name: .customLong("signing-key"), help: "ID:SECRET of an HMAC key for signed URLs; repeatable (TESSERA_SIGNING_KEYS).")
    var signingKeys: [String] = []
    @Option(name: .customLong("allow-host"), help: "A host remote sources may come from; repeatable (TESSERA_ALLOW_HOSTS).")
    var allowedHosts: [String] = []
    @Option(name: .customLong("allow-range"), help: "A CIDR range the SSRF guard lets through; repeatable (TESSERA_ALLOW_RANGES).")
    var allowedRanges: [String] = []
    @Option(name: .customLong("max-source-bytes"), help: "Largest source, in bytes (TESSERA_MAX_SOURCE_BYTES).") var maximumSourceBytes: Int?
    @Option(name: .customLong("max-source-pixels"), help: "Largest source, in pixels (TESSERA_MAX_SOURCE_PIXELS).") var maximumSourcePixels: Int?
    @Option(name: .customLong("max-output-pixels"), help: "Largest output, in pixels (TESSERA_MAX_OUTPUT_PIXELS).") var maximumOutputPixels: Int?
    @Option(name: .customLong("request-timeout"), help: "Seconds a request may take before it is answered 504 (TESSERA_REQUEST_TIMEOUT; default 30).")
    var requestTimeout: Double?
    @Option(name: .customLong("download-timeout"), help: "Seconds the download of a remote source may take (TESSERA_DOWNLOAD_TIMEOUT; default 10).")
    var downloadTimeout: Double?
    @Option(name: .customLong("idle-timeout"), help: "Seconds a keep-alive connection may send nothing before it is closed (TESSERA_IDLE_TIMEOUT; default 60).")
    var idleTimeout: Double?
    @Option(name: .customLong("header-timeout"), help: "Seconds a request's headers may take to arrive (TESSERA_HEADER_TIMEOUT; default 10).")
    var headerTimeout: Double?
    @Option(name: .customLong("max-connections"), help: "Connections open at once; more are closed when accepted (TESSERA_MAX_CONNECTIONS; default no limit).")
    var maximumConnections: Int?
    @Option(name: .customLong("metrics-listen"), help: "HOST:PORT of a listener of its own for /metrics (TESSERA_METRICS_LISTEN; default: /metrics on --listen).")
    var metricsListen: String?
    @Option(name: .customLong("decoding"),
            help: "lenient (the default: damaged and truncated sources are served as browsers show them, marked X-Tessera-Decode) or strict (refused: 415 undecodable_source) (TESSERA_DECODING).")
    var decoding: DecodingPolicyArgument?
    @Option(name: .customLong("partial-max-age"),
            help: "Cache-Control max-age, in seconds, of an answer made from a truncated source (TESSERA_PARTIAL_MAX_AGE; default 60).")
    var partialMaxAge: Int?
    @Option(name: .customLong("avif-speed"), help: "libaom's speed for AVIF answers, 0 (slowest, smallest) … 9 (TESSERA_AVIF_SPEED; default 8).")
    var avifSpeed: Int?
    @Flag(name: .customLong("only-presets"),
          help: "Serve presets only: /v1/resize is 404 and preset routes take no query option but s= (TESSERA_ONLY_PRESETS=1).")
    var onlyPresets = false
    @Option(name: .customLong("allowed-widths"), help: "Comma-separated widths /v1/resize accepts (TESSERA_ALLOWED_WIDTHS; default any).")
    var allowedWidths: String?
    @Option(name: .customLong("allowed-heights"), help: "Comma-separated heights /v1/resize accepts (TESSERA_ALLOWED_HEIGHTS; default any).")
    var allowedHeights: String?
    @Option(name: .customLong("fallback-image"),
            help: "An image served, drawn like the request, when its source is missing or cannot be decoded (TESSERA_FALLBACK_IMAGE).")
    var fallbackImage: String?
    @Option(name: .customLong("fallback-status"), help: "The status of the fallback image (TESSERA_FALLBACK_STATUS; default 404).")
    var fallbackStatus: Int?
    @Option(name: .customLong("fallback-max-age"), help: "Cache-Control max-age of the fallback image, in seconds (TESSERA_FALLBACK_MAX_AGE; default 60).")
    var fallbackMaxAge: Int?
    @Option(name: .customLong("max-decodes"), help: "Decodes at once (TESSERA_MAX_DECODES).") var maximumDecodes: Int?
    @Option(name: .customLong("max-queued-decodes"), help: "Requests waiting for a decode before 503 (TESSERA_MAX_QUEUED_DECODES).")
    var maximumQueuedDecodes: Int?
    @Option(name: .customLong("response-cache-bytes"), help: "Memory for encoded responses (TESSERA_RESPONSE_CACHE_BYTES).")
    var responseCacheBytes: Int?
    @Option(name: .customLong("source-check-interval"),
            help: "Seconds a source's stat answers for it on memory hits; 0 checks every request (TESSERA_SOURCE_CHECK_INTERVAL; default 0).")
    var sourceCheckInterval: Double?
    @OptionGroup var sourceOptions: SourceOptions
    @Flag(name: .customLong("no-gallery"), help: "No /gallery page (TESSERA_GALLERY=off).") var noGallery = false
    @Option(name: .customLong("gallery-max-images"), help: "Most images one gallery listing returns (TESSERA_GALLERY_MAX_IMAGES; default 20000).")
    var galleryMaximumImages: Int?
    @Option(name: .customLong("gallery-thumbhash-seconds"),
            help: "Longest a gallery listing spends making the ThumbHashes its images lack (TESSERA_GALLERY_THUMBHASH_SECONDS; default 2).")
    var galleryThumbHashSeconds: Double?
    @Option(name: .customLong("gallery-report"), help: "Accept POST /gallery/report (the page's test mode) and write it to FILE (TESSERA_GALLERY_REPORT).")
    var galleryReport: String?
    @Option(name: .customLong("log-level"),
            help: "Least level logged: trace, debug, info (one line per request), notice, warning, error, critical (TESSERA_LOG_LEVEL; default info).")
    var logLevel: String?
    @Option(name: .customLong("log-format"),
            help: "text (swift-log's lines) or json (one JSON object per line), on standard error (TESSERA_LOG_FORMAT; default text).")
    var logFormat: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration = try makeConfiguration(environment: environment)
        if try Self.logFormat(logFormat ?? environment["TESSERA_LOG_FORMAT"]) == .json {
            LoggingSystem.bootstrap { label in JSONLogHandler(label: label) }
        }
        var logger = Logger(label: "tessera.serve")
        if let name = logLevel ?? environment["TESSERA_LOG_LEVEL"] {
            guard let level = Logger.Level(rawValue: name.lowercased()) else { throw ValidationError("log level '\(name)' is not one of trace, debug, info, notice, warning, error, critical") }
            logger.logLevel = level
        }
        HeapPolicy.configureForServing()
        var server = try ImageServer(configuration: configuration, logger: logger)
        if let file = galleryReport ?? environment["TESSERA_GALLERY_REPORT"] { server.addGalleryTestMode(reportFile: file) }
        let trimming = Task.detached(priority: .background) { [registry = server.registry] in await Self.returnFreedHeapPages(reportingTo: registry) }
        defer { trimming.cancel() }
        try await server.run(onListening: { port in
            Self.announce("listening on", address: configuration.listen, port: port)
        }, onMetricsListening: { port in
            Self.announce("metrics on", address: configuration.metricsListen ?? "", port: port)
        })
    }

    /// The log formats of `--log-format`.
    enum LogFormat: String, CaseIterable {
        /// swift-log's `StreamLogHandler` lines (the default).
        case text
        /// ``JSONLogHandler``'s lines.
        case json
    }

    /// `name` as a log format (`nil`: text).
    static func logFormat(_ name: String?) throws -> LogFormat {
        guard let name else { return .text }
        guard let format = LogFormat(rawValue: name.lowercased()) else {
            throw ValidationError("log format '\(name)' is not one of \(LogFormat.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return format
    }

    /// Prints `tessera serve: WHAT HOST:PORT` on standard output, with the host of `address` and the port
    /// bound (so `:0` shows the port the system chose); tests and scripts wait for these lines.
    static func announce(_ what: String, address: String, port: Int) {
        let line = "tessera serve: \(what) \(address.split(separator: ":").dropLast().joined(separator: ":")):\(port)\n"
        FileHandle.standardOutput.write(Data(line.utf8))
    }

    /// glibc gives freed heap memory back to the system only from the top of each arena, so the free
    /// pages a server's churn leaves inside its arenas (evicted responses, a decode's row buffers, one
    /// arena per thread that allocated) stay resident: RSS creeps up long after the caches are full
    /// (docs/RELIABILITY.md, soak). `malloc_trim(0)` returns every whole free page inside the arenas;
    /// every 10 s it costs a few milliseconds of one thread, like jemalloc's background purging.
    /// Each round also sets three gauges from glibc's statistics (mallinfo2), which tell live memory from
    /// what the allocator keeps: `tessera_heap_in_use_bytes` (allocated, not freed),
    /// `tessera_heap_free_bytes` (free inside the arenas, before the trim) and `tessera_heap_mapped_bytes`
    /// (allocations with a mapping of their own, part of in use).
    static func returnFreedHeapPages(reportingTo registry: PrometheusCollectorRegistry) async {
        func gauge(_ name: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "tessera", metricName: name, unitName: "bytes", helpText: help))
        }
        let inUse = gauge("heap_in_use", "Heap bytes allocated and not freed (glibc mallinfo2)")
        let free = gauge("heap_free", "Free bytes inside the heap arenas before the periodic trim")
        let mapped = gauge("heap_mapped", "Heap bytes in allocations with a mapping of their own")
        func record() {
            let now = tessera_heap_statistics_now()
            inUse.set(Double(now.inUse))
            free.set(Double(now.freeInArenas))
            mapped.set(Double(now.mapped))
        }
        record()
        while (try? await Task.sleep(for: .seconds(10))) != nil {
            record()
            _ = tessera_heap_trim()
        }
    }

    /// The configuration from the file, the environment and the flags, in that order of precedence (lowest first).
    func makeConfiguration(environment: [String: String]) throws -> ServerConfiguration {
        var configuration = ServerConfiguration(root: "")
        if let file = config ?? environment["TESSERA_CONFIG"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            do {
                configuration = try JSONDecoder().decode(ServerConfiguration.self, from: data)
            } catch {
                throw ValidationError("config file \(file): \(error)")
            }
        }
        func list(_ name: String) -> [String]? {
            environment[name].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } }
        }
        func number<T: LosslessStringConvertible>(_ flag: T?, _ name: String) throws -> T? {
            if let flag { return flag }
            guard let text = environment[name] else { return nil }
            guard let value = T(text) else { throw ValidationError("\(name)=\(text) is not a number") }
            return value
        }
        if let value = root ?? environment["TESSERA_ROOT"] { configuration.root = value }
        if let value = listen ?? environment["TESSERA_LISTEN"] { configuration.listen = value }
        if let value = tablesDirectory ?? environment["TESSERA_TABLES"] { configuration.tablesDirectory = value }
        if let texts = presets.isEmpty ? list("TESSERA_PRESETS") : presets {
            configuration.presets = try texts.map { text in
                do throws(ServerConfigurationError) { return try ServerConfiguration.Preset(parsing: text) } catch { throw ValidationError(error.description) }
            }
        }
        if let keys = signingKeys.isEmpty ? list("TESSERA_SIGNING_KEYS") : signingKeys {
            configuration.signingKeys = try keys.map { text in
                guard let colon = text.firstIndex(of: ":"), colon != text.startIndex, text.index(after: colon) != text.endIndex else {
                    throw ValidationError("signing key '\(text)' is not ID:SECRET")
                }
                return ServerConfiguration.SigningKey(id: String(text[..<colon]), secret: String(text[text.index(after: colon)...]))
            }
        }
        if let hosts = allowedHosts.isEmpty ? list("TESSERA_ALLOW_HOSTS") : allowedHosts { configuration.remote.allowedHosts = hosts }
        if let ranges = allowedRanges.isEmpty ? list("TESSERA_ALLOW_RANGES") : allowedRanges { configuration.remote.allowedAddressRanges = ranges }
        if let value = try number(maximumSourceBytes, "TESSERA_MAX_SOURCE_BYTES") { configuration.limits.maximumSourceBytes = value }
        if let value = try number(maximumSourcePixels, "TESSERA_MAX_SOURCE_PIXELS") { configuration.limits.maximumSourcePixels = value }
        if let value = try number(maximumOutputPixels, "TESSERA_MAX_OUTPUT_PIXELS") { configuration.limits.maximumOutputPixels = value }
        if let value = try number(requestTimeout, "TESSERA_REQUEST_TIMEOUT") { configuration.limits.requestTimeoutSeconds = value }
        if let value = try number(downloadTimeout, "TESSERA_DOWNLOAD_TIMEOUT") { configuration.limits.downloadTimeoutSeconds = value }
        if let value = try number(idleTimeout, "TESSERA_IDLE_TIMEOUT") { configuration.connections.idleTimeoutSeconds = value }
        if let value = try number(headerTimeout, "TESSERA_HEADER_TIMEOUT") { configuration.connections.headerTimeoutSeconds = value }
        if let value = try number(maximumConnections, "TESSERA_MAX_CONNECTIONS") { configuration.connections.maximumConnections = value }
        if let value = metricsListen ?? environment["TESSERA_METRICS_LISTEN"] { configuration.metricsListen = value }
        if let name = decoding?.rawValue ?? environment["TESSERA_DECODING"] {
            guard let value = DecodingPolicyArgument(rawValue: name.lowercased()) else {
                throw ValidationError("decoding '\(name)' is not one of lenient, strict")
            }
            configuration.decoding = value.policy
        }
        if let value = try number(partialMaxAge, "TESSERA_PARTIAL_MAX_AGE") { configuration.partialMaxAgeSeconds = value }
        if let value = try number(avifSpeed, "TESSERA_AVIF_SPEED") { configuration.avifSpeed = value }
        if onlyPresets || environment["TESSERA_ONLY_PRESETS"] == "1" { configuration.onlyPresets = true }
        func sizes(_ flag: String?, _ name: String) throws -> [Int]? {
            guard let text = flag ?? environment[name] else { return nil }
            let values = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !values.isEmpty, values.allSatisfy({ $0.map { $0 > 0 } == true }) else {
                throw ValidationError("\(name.replacingOccurrences(of: "TESSERA_", with: "").lowercased()) '\(text)' is not a comma-separated list of positive sizes")
            }
            return values.compactMap { $0 }
        }
        if let values = try sizes(allowedWidths, "TESSERA_ALLOWED_WIDTHS") { configuration.limits.allowedWidths = values }
        if let values = try sizes(allowedHeights, "TESSERA_ALLOWED_HEIGHTS") { configuration.limits.allowedHeights = values }
        if let image = fallbackImage ?? environment["TESSERA_FALLBACK_IMAGE"] {
            configuration.fallback = ServerConfiguration.Fallback(image: image)
        }
        if let value = try number(fallbackStatus, "TESSERA_FALLBACK_STATUS") {
            guard configuration.fallback != nil else { throw ValidationError("--fallback-status needs a fallback image") }
            configuration.fallback?.status = value
        }
        if let value = try number(fallbackMaxAge, "TESSERA_FALLBACK_MAX_AGE") {
            guard configuration.fallback != nil else { throw ValidationError("--fallback-max-age needs a fallback image") }
            configuration.fallback?.maxAgeSeconds = value
        }
        if let value = try number(maximumDecodes, "TESSERA_MAX_DECODES") { configuration.limits.maximumConcurrentDecodes = value }
        if let value = try number(maximumQueuedDecodes, "TESSERA_MAX_QUEUED_DECODES") { configuration.limits.maximumQueuedDecodes = value }
        if let value = try number(responseCacheBytes, "TESSERA_RESPONSE_CACHE_BYTES") { configuration.responseCacheBytes = value }
        if let value = try number(sourceCheckInterval, "TESSERA_SOURCE_CHECK_INTERVAL") { configuration.sourceCheckIntervalSeconds = value }
        try sourceOptions.apply(to: &configuration, environment: environment)
        if noGallery || environment["TESSERA_GALLERY"] == "off" { configuration.gallery.enabled = false }
        if let value = try number(galleryMaximumImages, "TESSERA_GALLERY_MAX_IMAGES") { configuration.gallery.maximumImages = value }
        if let value = galleryThumbHashSeconds ?? environment["TESSERA_GALLERY_THUMBHASH_SECONDS"].flatMap(Double.init) {
            guard value >= 0 else { throw ValidationError("--gallery-thumbhash-seconds must be 0 or more") }
            configuration.gallery.thumbHashSeconds = value
        }
        do throws(ServerConfigurationError) { try configuration.validate() } catch { throw ValidationError(error.description) }
        return configuration
    }
}
