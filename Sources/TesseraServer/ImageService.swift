#if Serving
import Crypto
import Foundation
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import Synchronization
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraHTTP

/// The image service behind `tessera serve`, independent of HTTP plumbing: presets on image tables, ad-hoc
/// resizes, remote sources, format negotiation, limits and the encoded-response cache. ``ImageRoutes``
/// puts it behind Hummingbird routes; docs/SERVING.md describes the behaviour.
///
/// ``respond(to:)`` is the one path of every request: resolved once (`ServeRequest`: signature, path,
/// source version, cache key), then the encoded-response memory cache, then one job per key in the work
/// pool (the preset's table or a decode, then one encode), each caller waiting until its own deadline. When
/// the resolve trusted a recent check of a file that is about to be read, only that file is checked again
/// (a `stat`), not the whole request. Each resolved target is recorded (`ResolvedTargets`), so that
/// through `tessera serve` the next `GET` of the same target is answered from memory on the connection's
/// event loop without being routed or resolved again; the memory answer is the same function on both ways.
public final class ImageService: Sendable {
    /// What the service was made with.
    public let configuration: ServerConfiguration
    /// The tables' directory in use (``ServerConfiguration/tablesDirectory`` or its default).
    public let tablesDirectory: URL
    let root: RootDirectory
    /// The named sources (`@NAME/…`).
    let sources: [String: NamedSource]
    /// The buckets clients may name in `src=s3://BUCKET/KEY`.
    let buckets: [String: any ObjectStore]
    let presets: [String: PresetTable]
    let responses: ResponseCache
    /// The one bound on CPU work (decodes and encodes), with its queue bound (`503 too_many_decodes`).
    let work: ParallelismLimit
    let decoder: ImageDecoder
    /// The configured watermarks by name, decoded (``loadWatermarks(_:decoder:)``).
    let watermarks: [String: LoadedWatermark]
    /// Jobs by response key: one produce per key, whoever asks.
    let jobs = WorkPool<(ResponseCache.Entry, CacheOutcome)>()
    /// Table fills by preset and source version: one decode per slot, whatever the output format.
    let fills = WorkPool<PresetTable.Filled>()
    /// Version checks of named sources' objects, one per object at a time, each caller until its own deadline.
    let versionChecks = WorkPool<ObjectVersion>()
    /// How request targets resolved, for the memory-hit handler (recorded by ``respond(to:)``).
    let targets = ResolvedTargets()
    let remoteGuard: RemoteSourceGuard
    let remote: (manager: ImageManager, loader: HTTPDataLoader)?
    let signer: URLSigner?
    /// imgproxy's URLs' parser, when ``ServerConfiguration/Imgproxy/prefix`` is set.
    let imgproxy: ImgproxyURLs?
    /// thumbor's URLs' parser, when ``ServerConfiguration/Thumbor/prefix`` is set.
    let thumbor: ThumborURLs?
    let metrics: ServiceMetrics
    /// The `Cache-Control` of every image response, `public, max-age=N` (made once).
    let cacheControl: String
    /// The `Cache-Control` of a response made from a truncated source: `public, max-age=N` with
    /// ``ServerConfiguration/partialMaxAgeSeconds`` (at most ``ServerConfiguration/maxAgeSeconds``).
    let partialCacheControl: String
    let counters = LockedValue(ServiceStatistics())
    /// ``ServiceStatistics/memoryHits``, counted apart: every memory hit adds to it, from every event loop,
    /// and an atomic addition is all that needs (no lock for the loops to wait on).
    let memoryHitCount = Atomic<Int>(0)
    /// The one run of ``shutdown()``'s work, once it has started.
    private let shutdownWork = LockedValue<Task<Void, Never>?>(nil)
    /// The fallback image's bytes (read and probed when the service starts) and its `Cache-Control`.
    let fallback: (data: Data, cacheControl: String)?

    /// Opens (or creates) one image table per preset and, when remote hosts are allowed, an `ImageManager`
    /// whose loader checks every URL with the SSRF guard.
    /// - Parameters:
    ///   - configuration: the root, presets, limits and the rest; checked first (`validate()`).
    ///   - metricsFactory: where metrics go (the server passes its Prometheus factory); `nil`: the
    ///     global `MetricsSystem` factory. The library's own metrics (image tables, remote fetching:
    ///     docs/OBSERVABILITY.md) go there too.
    ///   - logger: receives the library's events (table repairs, downloads, evictions…); silent by default.
    public init(configuration: ServerConfiguration, metricsFactory: (any MetricsFactory)? = nil,
                logger: Logger = Observability.silentLogger) throws {
        try configuration.validate()
        self.configuration = configuration
        cacheControl = "public, max-age=\(configuration.maxAgeSeconds)"
        partialCacheControl = "public, max-age=\(max(0, min(configuration.partialMaxAgeSeconds, configuration.maxAgeSeconds)))"
        root = try RootDirectory(configuration.root, recheckSeconds: configuration.sourceCheckIntervalSeconds)
        let tables = Self.tablesDirectory(of: configuration, root: root)
        try Self.checkTablesOutside(root, tables)
        try FileManager.default.createDirectory(at: tables, withIntermediateDirectories: true)
        tablesDirectory = tables
        let limits = configuration.limits
        decoder = Self.decoder(for: configuration)
        let metrics = ServiceMetrics(factory: metricsFactory ?? MetricsSystem.factory)
        self.metrics = metrics
        work = ParallelismLimit(width: limits.maximumConcurrentDecodes, queueLimit: limits.maximumQueuedDecodes) { running, waiting in
            metrics.decodesRunning.set(running)
            metrics.decodesWaiting.set(waiting)
        }
        let observability = Observability(logger: logger, metricsFactory: metricsFactory)
        let watermarks = try Self.loadWatermarks(configuration.watermarks, decoder: decoder)
        self.watermarks = watermarks
        var presets: [String: PresetTable] = [:]
        for var preset in configuration.presets {
            if let name = preset.processing.watermark?.name { preset.processing.watermark?.version = watermarks[name]?.version }
            presets[preset.name] = try PresetTable(preset, capacity: configuration.tableCapacity, directory: tables,
                                                   observability: observability)
        }
        self.presets = presets
        responses = ResponseCache(capacityBytes: configuration.responseCacheBytes)
        remoteGuard = RemoteSourceGuard(allowedHosts: configuration.remote.allowedHosts,
                                        allowedRanges: configuration.remote.allowedAddressRanges.compactMap(AddressRange.init))
        if remoteGuard.isEnabled {
            let check = remoteGuard
            let loader = HTTPDataLoader(configuration: HTTPDataLoader.Configuration(refusedHostCooldown: .zero),
                                        urlCheck: { url in try await check.checkedAddress(url) })
            let disk = URL(fileURLWithPath: configuration.remote.diskCacheDirectory ?? tables.appendingPathComponent("remote").path)
            let settings = ImageManager.Configuration(disk: DiskCache.Configuration(directory: disk),
                                                      requestTimeout: .seconds(limits.downloadTimeoutSeconds),
                                                      maximumResponseBytes: limits.maximumSourceBytes,
                                                      observability: observability)
            remote = (try ImageManager(configuration: settings, loader: loader, decoder: decoder), loader)
        } else {
            remote = nil
        }
        let context = StoreContext(configuration: configuration, tables: tables, decoder: decoder, observability: observability,
                                   metrics: metricsFactory ?? MetricsSystem.factory, environment: ProcessInfo.processInfo.environment)
        sources = try Self.makeSources(context)
        buckets = try Self.makeBuckets(context)
        signer = configuration.signingKeys.isEmpty ? nil : URLSigner(keys: configuration.signingKeys)
        imgproxy = try configuration.imgproxy.prefix.map { _ throws(ServerConfigurationError) in try ImgproxyURLs(configuration) }
        thumbor = configuration.thumbor.prefix.map { _ in ThumborURLs(configuration) }
        fallback = try Self.loadFallback(configuration.fallback, decoder: decoder)
    }

    /// What the service did so far (also exported as metrics).
    public var statistics: ServiceStatistics {
        var statistics = counters.withLock { $0 }
        statistics.memoryHits = memoryHitCount.load(ordering: .relaxed)
        return statistics
    }

    /// The names of the configured presets.
    public var presetNames: [String] { presets.keys.sorted() }

    /// Writes the tables' dirty pages to disk and closes the remote loader and the object stores' connections:
    /// call once no request runs. In a `ServiceGroup` the service's `run()` calls it (``run()``). Only the
    /// first call does the work; a later or concurrent one waits until that work is done.
    public func shutdown() async {
        let work = shutdownWork.withLock { work in
            if let work { return work }
            let started = Task { [self] in await closeEverything() }
            work = started
            return started
        }
        await work.value
    }

    /// ``shutdown()``'s work, done once.
    private func closeEverything() async {
        for table in presets.values { try? table.table.flush(synchronously: true) }
        try? await remote?.loader.shutdown()
        for case .objects(let store) in sources.values { await store.shutdown() }
        for store in buckets.values { await store.shutdown() }
        counters.withLock { $0.shutdowns += 1 }
    }

    // MARK: The request path

    /// Answers one image request: resolved once, then memory, then the work pool (table or decode, then
    /// encode), within the request timeout (`504 timeout` at the deadline, the work going on for others).
    /// A file source whose resolve trusted a recent check is `stat`ed again before it is read
    /// (`rechecked(_:)`); its signature, shape and path are not resolved again.
    /// With a fallback image (``ServerConfiguration/fallback``), a source that is missing or cannot be
    /// decoded is answered with it instead of an error (`fallbackResponse(to:after:)`).
    public func respond(to info: RequestInfo) async throws(ServiceError) -> ImageResponse {
        do {
            return try await answer(info)
        } catch {
            guard fallback != nil, Self.fallbackApplies(to: error) else { throw error }
            return try await fallbackResponse(to: info, after: error)
        }
    }

    /// ``respond(to:)`` without the fallback: ``answerOnce(_:)``, and once more when a named source's
    /// object changed while the first try read it (the second learns the new version).
    private func answer(_ info: RequestInfo) async throws(ServiceError) -> ImageResponse {
        do {
            return try await answerOnce(info)
        } catch where error.code == .sourceChanged {
            return try await answerOnce(info)
        }
    }

    /// One try of ``answer(_:)``: one resolve of `info`, recorded in ``targets`` for the memory-hit handler.
    private func answerOnce(_ info: RequestInfo) async throws(ServiceError) -> ImageResponse {
        let request = try resolve(info, trustingRecentCheck: true)
        remember(request, for: info)
        return try await answer(request, for: info).disposed(request.disposition)
    }

    /// ``answerOnce(_:)`` after the resolve: memory, a `304`, or the work (shared by the requests of one key).
    private func answer(_ resolved: ServeRequest, for info: RequestInfo) async throws(ServiceError) -> ImageResponse {
        let deadline = requestDeadline()
        var request = resolved
        if case .object(let store, let key, nil) = request.source {   // its version first: a check, or a download
            request = request.versioned(try await version(of: key, in: store, deadline: deadline))
        }
        if let answer = fromMemory(request) { return answer }
        if let file = request.file, !file.verified {   // the source will be read: its file checked now
            request = try rechecked(request)
            remember(request, for: info)
            if let answer = fromMemory(request) { return answer }
        }
        if request.isVersioned, request.ifNoneMatch != nil || request.ifModifiedSince != nil {
            let etag = Self.etag(request.key)
            if Self.unchanged(request, etag: etag, lastModified: request.lastModified) { return notModified(etag, lastModified: request.lastModified) }
        }
        do {
            let request = request
            let done = try await jobs.value(for: request.key, deadline: deadline) { [self] in try await produce(request) }
            let (entry, outcome) = done.value
            if Self.unchanged(request, etag: entry.etag, lastModified: entry.lastModified) { return notModified(entry) }
            return ok(entry, outcome: done.joined ? .coalesced : outcome)
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// Records how `info`'s target resolved (``ResolvedTargets``), when its answer can come from memory: a
    /// file's request as checked, an object's before its version.
    private func remember(_ request: ServeRequest, for info: RequestInfo) {
        guard request.expires == nil else { return }   // a hit by target would outlive the URL
        switch request.source {
        case .file, .object(_, _, nil): break
        case .remote, .object: return
        }
        var request = request
        request.ifNoneMatch = nil
        let key = ResolvedTargets.Key(target: info.target, accepted: info.accept.flatMap(OutputChoice.bestAccepted))
        targets.record(key, ResolvedTargets.Resolved(request: request, route: info.route, path: info.path))
    }

    /// The deadline of a request starting now: ``ServerConfiguration/Limits/requestTimeoutSeconds`` on
    /// `ContinuousClock`, the one clock of the service's deadlines, source checks and durations (NIO's
    /// own deadlines appear only where NIO schedules, in the connection's timeouts).
    func requestDeadline() -> ContinuousClock.Instant {
        .now + .seconds(configuration.limits.requestTimeoutSeconds)
    }

    /// The version of `key` in `store` now (``ObjectStore/current(_:recheckSeconds:)``): one check per
    /// object at a time, shared by the requests that arrive meanwhile, each waiting until its own `deadline`
    /// (`504 timeout`; the check goes on for the others and its result is kept).
    private func version(of key: String, in store: any ObjectStore, deadline: ContinuousClock.Instant) async throws(ServiceError) -> ObjectVersion {
        let recheck = configuration.sourceCheckIntervalSeconds
        if let known = store.recentVersion(of: key, within: recheck) { return known }
        do {
            return try await versionChecks.value(for: store.name + "\u{0}" + key, deadline: deadline) {
                try await store.current(key, recheckSeconds: recheck)
            }.value
        } catch {
            throw ServiceError.from(error)
        }
    }

    /// The answer from memory alone, without waiting: an encoded-response hit or a `304` for a local
    /// source (a check of the source younger than the recheck interval is trusted). `nil` for every other
    /// request, errors included: ``respond(to:)`` answers those, resolving the request itself.
    public func cachedResponse(to info: RequestInfo) -> ImageResponse? {
        guard var request = try? resolve(info, trustingRecentCheck: true) else { return nil }
        if case .object(let store, let key, nil) = request.source {
            guard let version = store.recentVersion(of: key, within: configuration.sourceCheckIntervalSeconds) else { return nil }
            request = request.versioned(version)
        }
        return fromMemory(request)?.disposed(request.disposition)
    }

    /// The memory answer to a target resolved before (``ResolvedTargets``), for the memory-hit handler on
    /// the connection's event loop: `nil` unless the resolved request still stands and its answer is in
    /// memory. A file's last check stands for the source check interval; after it (at once without
    /// one) the file is `stat`ed again, and that check is recorded for `key`. An object stands while its
    /// store's last check of its version does; then `nil`, and the router checks the version.
    func memoryAnswer(to resolved: ResolvedTargets.Resolved, for key: ResolvedTargets.Key, ifNoneMatch: String?,
                      ifModifiedSince: String? = nil) -> ImageResponse? {
        let since = ifModifiedSince.flatMap(Self.httpSeconds)
        let answer: ImageResponse?
        switch resolved.check {
        case .file(let responseKey, let until):
            if ContinuousClock.now < until || Self.isUnchangedWithoutInterval(resolved.request) {
                answer = fromMemory(key: responseKey, ifNoneMatch: ifNoneMatch, ifModifiedSince: since)
            } else {
                guard let checked = try? checkedAgain(resolved.request) else { return nil }
                targets.record(key, ResolvedTargets.Resolved(request: checked, route: resolved.route, path: resolved.path))
                answer = fromMemory(key: checked.key, ifNoneMatch: ifNoneMatch, ifModifiedSince: since)
            }
        case .object(let store, let objectKey):
            guard let version = store.recentVersion(of: objectKey, within: configuration.sourceCheckIntervalSeconds) else { return nil }
            answer = fromMemory(key: resolved.request.versioned(version).key, ifNoneMatch: ifNoneMatch, ifModifiedSince: since)
        case .none:
            return nil
        }
        guard let disposition = resolved.disposition else { return answer }
        return answer?.disposed(disposition)
    }

    /// Whether `request`'s file, under a root without a check interval (every hit checks its file), is
    /// checked now (a `stat`) and found at the version its key names: then that key answers as it is. A
    /// rebuilt request, key and resolved target would cost a hit more than the `stat` (about half of its
    /// CPU); with an interval they are rebuilt once per interval, when the check is renewed.
    private static func isUnchangedWithoutInterval(_ request: ServeRequest) -> Bool {
        guard case .file(let file, let directory) = request.source, directory.recheck == .zero else { return false }
        return file.isUnchangedNow()
    }

    /// The one memory answer, whoever asks (the request path, the memory-hit handler): a hit for a request
    /// whose source's version is known (its `If-None-Match` compared with the entry's stored ETag, so a hit
    /// computes no hash).
    private func fromMemory(_ request: ServeRequest) -> ImageResponse? {
        guard request.isVersioned else { return nil }
        return fromMemory(key: request.key, ifNoneMatch: request.ifNoneMatch, ifModifiedSince: request.ifModifiedSince)
    }

    /// ``fromMemory(_:)`` of a versioned request's key.
    private func fromMemory(key: String, ifNoneMatch: String?, ifModifiedSince: Int?) -> ImageResponse? {
        guard let hit = responses.get(key) else { return nil }
        let unchanged = Self.unchanged(ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, etag: hit.etag, lastModified: hit.lastModified)
        return unchanged ? notModified(hit) : ok(hit, outcome: .memory)
    }

    func ok(_ entry: ResponseCache.Entry, outcome: CacheOutcome) -> ImageResponse {
        if outcome == .memory { memoryHitCount.add(1, ordering: .relaxed) }
        metrics.bytesServed.increment(by: Int64(entry.body.readableBytes))
        metrics.outcome(outcome)
        return ImageResponse(status: 200, bodyBuffer: entry.body, contentType: entry.contentType, etag: entry.etag,
                             cacheControl: cacheControl(for: entry.integrity), outcome: outcome, integrity: entry.integrity,
                             lastModified: entry.lastModified, animation: entry.animation,
                             hitHead: outcome == .memory ? entry.hitHead : nil)
    }

    /// A `304` for a response whose ETag is `etag`: one of an intact source (see ``etag(_:integrity:)``).
    private func notModified(_ etag: String, lastModified: Int?) -> ImageResponse {
        ImageResponse(status: 304, bodyBuffer: ByteBuffer(), contentType: "", etag: etag, cacheControl: cacheControl, outcome: .notModified,
                      lastModified: lastModified)
    }

    /// A `304` for `entry`, with its `Cache-Control` and `X-Tessera-Decode`.
    private func notModified(_ entry: ResponseCache.Entry) -> ImageResponse {
        ImageResponse(status: 304, bodyBuffer: ByteBuffer(), contentType: "", etag: entry.etag,
                      cacheControl: cacheControl(for: entry.integrity), outcome: .notModified, integrity: entry.integrity,
                      lastModified: entry.lastModified)
    }

    /// The `Cache-Control` of an answer whose source decoded with `integrity`.
    func cacheControl(for integrity: DecodeIntegrity) -> String {
        integrity == .truncated ? partialCacheControl : cacheControl
    }

    /// The ETag of a response of `key` whose source decoded with `integrity`. An intact or damaged source's
    /// is ``etag(_:)`` of the key, so a conditional request is answered `304` before any lookup; a truncated
    /// source's differs, so that its `304` comes from the stored response and carries the short `Cache-Control`.
    static func etag(_ key: String, integrity: DecodeIntegrity) -> String {
        etag(integrity == .truncated ? key + "|truncated" : key)
    }

    /// A strong ETag: 128 bits of SHA-256 of the response's cache key, as 32 hex digits in quotes.
    static func etag(_ key: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [0x22]
        text.reserveCapacity(34)
        for byte in SHA256.hash(data: Data(key.utf8)).prefix(16) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        text.append(0x22)
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `If-None-Match` (a list, or `*`) names `etag` (weak comparison, as RFC 9110 asks for it).
    /// Whether a request's conditions make its answer a `304` (RFC 9110, 13.2.2): `If-None-Match`
    /// (``matches(_:_:)``) when it is given; else `If-Modified-Since` when the source's modification time is
    /// known and not after it.
    static func unchanged(ifNoneMatch: String?, ifModifiedSince: Int?, etag: String, lastModified: Int?) -> Bool {
        if ifNoneMatch != nil { return matches(ifNoneMatch, etag) }
        guard let ifModifiedSince, let lastModified else { return false }
        return lastModified <= ifModifiedSince
    }

    /// ``unchanged(ifNoneMatch:ifModifiedSince:etag:lastModified:)`` with `request`'s conditions.
    static func unchanged(_ request: ServeRequest, etag: String, lastModified: Int?) -> Bool {
        unchanged(ifNoneMatch: request.ifNoneMatch, ifModifiedSince: request.ifModifiedSince, etag: etag, lastModified: lastModified)
    }

    /// An HTTP date (`If-Modified-Since`) in whole seconds since 1970; `nil` when it is not one.
    static func httpSeconds(_ text: String) -> Int? {
        HTTPCacheInfo.parseHTTPDate(text).map { Int($0.timeIntervalSince1970.rounded(.down)) }
    }

    static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        if header.trimmingCharacters(in: .whitespaces) == "*" { return true }
        return header.split(separator: ",").contains { candidate in
            var tag = candidate.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}
#endif
