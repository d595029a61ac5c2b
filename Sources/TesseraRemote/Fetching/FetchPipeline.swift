@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation
import Logging

/// The work of one ``ImageManager`` job, run in a detached task (never on a caller's actor): disk
/// lookup, download or revalidation on a lane slot, disk store, decoding per requested variant,
/// memory insert. ``FetchCoordinator`` holds the state; this type holds the parts.
final class FetchPipeline: Sendable {
    let loader: any DataLoading
    let memory: (any MemoryCaching)?
    let disk: (any DiskCaching)?
    let decoder: ImageDecoder
    let settings: ImageManager.Configuration
    let authorizer: (any RequestAuthorizing)?
    let counters = LockedValue(FetchStatistics())
    let metrics: RemoteMetrics
    /// Bounds the decodes of all jobs together (``ImageManager/Configuration/maximumConcurrentDecodes``).
    let decodes: ParallelismLimit
    /// Bounds the loads of requests with their own credentials, which bypass the lanes
    /// (``ImageManager/Configuration/maximumConcurrentDownloads`` wide).
    let privateLoads: ParallelismLimit
    let now: @Sendable () -> Date

    init(loader: any DataLoading, memory: (any MemoryCaching)?, disk: (any DiskCaching)?, decoder: ImageDecoder,
         configuration: ImageManager.Configuration, authorizer: (any RequestAuthorizing)?, now: @escaping @Sendable () -> Date) {
        self.loader = loader
        self.memory = memory
        self.disk = disk
        self.decoder = decoder
        self.settings = configuration
        self.authorizer = authorizer
        self.now = now
        metrics = RemoteMetrics(observability: configuration.observability)
        decodes = ParallelismLimit(width: configuration.maximumConcurrentDecodes)
        privateLoads = ParallelismLimit(width: max(1, configuration.maximumConcurrentDownloads))
    }

    private var logger: Logger { settings.observability.logger }

    /// A disk copy answered: counted in ``ImageManager/statistics`` and in the metrics.
    private func countDiskHit() {
        counters.withLock { $0.diskHits += 1 }
        metrics.diskHits.increment()
    }

    /// Bytes with where they came from: a disk copy may be corrupt and is then fetched again.
    private struct Source {
        var data: Data
        var fromDisk: Bool
    }

    /// Runs the job of `url` until every requester is served or the job is abandoned.
    func run(url: URL, jobID: Int, headers: [String: String], coordinator: FetchCoordinator) async {
        do {
            var source = try await obtain(url: url, jobID: jobID, headers: headers, coordinator: coordinator)
            while let products = await coordinator.pendingProducts(url: url, jobID: jobID), !products.isEmpty {
                for product in products {
                    var result = await make(product, from: source.data)
                    if case .failure(let error) = result, source.fromDisk {
                        // The cached copy is corrupt: drop it and fetch the bytes again, once.
                        counters.withLock { $0.corruptRefetches += 1 }
                        logger.warning("disk cache copy does not decode; removed and downloading again", metadata: [
                            "url": "\(url.absoluteString)", "error": "\(error)",
                        ])
                        await disk?.remove(url)
                        source = try await download(url: url, jobID: jobID, headers: headers, coordinator: coordinator, revalidating: nil)
                        result = await make(product, from: source.data)
                    }
                    if case .success(.decoded(let image)) = result, case .decoded(let key) = product {
                        memory?.insert(image, for: key)
                    }
                    await coordinator.deliver(url: url, jobID: jobID, product: product, result: result)
                }
            }
        } catch {
            if !(error is CancellationError) { counters.withLock { $0.failures += 1 } }
            await coordinator.fail(url: url, jobID: jobID, error: error)
        }
    }

    /// The bytes for `url`: a fresh disk copy (any copy when offline), else a download or revalidation.
    private func obtain(url: URL, jobID: Int, headers: [String: String], coordinator: FetchCoordinator) async throws -> Source {
        let offline = settings.offline
        var cached: DiskCacheEntry?
        if let disk, disk.contains(url) { cached = await disk.entry(for: url) }
        if let cached, offline || cached.info.isFresh(at: now()) {
            countDiskHit()
            return Source(data: cached.data, fromDisk: true)
        }
        if disk != nil { metrics.diskMisses.increment() }
        if offline { throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString))) }
        return try await download(url: url, jobID: jobID, headers: headers, coordinator: coordinator, revalidating: cached)
    }

    /// Waits for a lane slot, loads (conditionally when `cached` has validators), and updates the disk.
    private func download(url: URL, jobID: Int, headers: [String: String], coordinator: FetchCoordinator,
                          revalidating cached: DiskCacheEntry?) async throws -> Source {
        let configuration = settings
        var request = loadRequest(url: url, headers: headers)
        if let cached, cached.info.canRevalidate { request = cached.info.conditionalRequest(request) }
        let relay = try await coordinator.acquireSlot(url: url, jobID: jobID)
        let response: LoadResponse
        do {
            response = try await load(request, progress: { relay.report($0) })
            await coordinator.releaseSlot(url: url, jobID: jobID)
        } catch {
            await coordinator.releaseSlot(url: url, jobID: jobID)
            throw error
        }
        try Task.checkCancellation()
        if response.isNotModified {
            guard let cached, request.isConditional else {
                throw TesseraError(.fetching(.httpStatus(code: 304, url: url.absoluteString)))
            }
            counters.withLock { $0.notModified += 1 }
            logger.debug("revalidated: 304 Not Modified", metadata: ["url": "\(url.absoluteString)"])
            let info = cached.info.refreshed(by: response, now: now(), defaultMaxAge: configuration.defaultMaxAge)
            try? await disk?.store(cached.data, info: info, for: url)
            return Source(data: cached.data, fromDisk: true)
        }
        // Only what looks like an image is kept on disk (an HTML error page served as 200 is not).
        if let disk, HTTPCacheInfo.isStorable(response), (try? decoder.probe(response.data)) != nil {
            let info = HTTPCacheInfo(response: response, requestedURL: url, now: now(), defaultMaxAge: configuration.defaultMaxAge)
            try? await disk.store(response.data, info: info, for: url)
        }
        return Source(data: response.data, fromDisk: false)
    }

    /// The request for `url` with the manager's limits, and its headers under the request's own.
    private func loadRequest(url: URL, headers: [String: String]) -> LoadRequest {
        LoadRequest(url: url, timeout: settings.requestTimeout, maximumBytes: settings.maximumResponseBytes,
                    headers: LoadRequest.headers(settings.headers, overriddenBy: headers))
    }

    /// Loads `request` through the authorizer, if any: authorized before it is sent, and after a `401`
    /// authorized again and sent exactly once more (``RequestAuthorizing``'s contract).
    private func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        guard let authorizer else { return try await loadOnce(request, progress: progress) }
        var sent = request
        try await authorize(&sent, by: authorizer, attempt: .initial)
        do {
            return try await loadOnce(sent, progress: progress)
        } catch where Self.isUnauthorized(error) {
            logger.info("401 Unauthorized: refreshing the credentials and retrying once", metadata: ["url": "\(request.url.absoluteString)"])
        }
        try await authorize(&sent, by: authorizer, attempt: .afterUnauthorized)
        do {
            return try await loadOnce(sent, progress: progress)
        } catch where Self.isUnauthorized(error) {
            throw TesseraError(.fetching(.unauthorized(url: request.url.absoluteString)), underlying: error)
        }
    }

    /// Whether a load failed with `401 Unauthorized` (of the URL or of a redirect's target).
    private static func isUnauthorized(_ error: any Error) -> Bool {
        guard let error = error as? TesseraError, case .fetching(.httpStatus(401, _)) = error.reason else { return false }
        return true
    }

    /// Lets `authorizer` set the headers of `request` (and nothing else).
    private func authorize(_ request: inout LoadRequest, by authorizer: any RequestAuthorizing, attempt: AuthorizationAttempt) async throws {
        var copy = request
        try await authorizer.authorize(&copy, attempt: attempt)
        request.headers = copy.headers
    }

    /// One load by the loader, counted, timed and logged.
    private func loadOnce(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        let address = request.url.absoluteString
        counters.withLock { $0.downloads += 1 }
        metrics.downloads.increment()
        logger.debug("download started", metadata: ["url": "\(address)", "conditional": "\(request.isConditional)"])
        let start = ContinuousClock.now
        do {
            let response = try await loader.load(request, progress: progress)
            metrics.downloadTime.recordSince(start)
            metrics.downloadBytes.increment(by: response.data.count)
            logger.debug("download finished", metadata: [
                "url": "\(address)", "status": "\(response.statusCode)", "bytes": "\(response.data.count)",
            ])
            return response
        } catch {
            if !(error is CancellationError) {
                metrics.downloadFailures.increment()
                logger.info("download failed", metadata: ["url": "\(address)", "error": "\(error)"])
            }
            throw error
        }
    }

    /// The `key` variant of `url` for a request with credentials of its own
    /// (``ImageManager``, "Credentials and caching"): loaded outside the lanes and the job of its URL,
    /// never read from a cache, stored on disk only when the response is `Cache-Control: public`,
    /// never put in the memory cache.
    func privateImage(url: URL, key: ImageKey, headers: [String: String],
                      progress: (@Sendable (LoadProgress) -> Void)?) async throws -> Bitmap {
        if settings.offline { throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString))) }
        let request = loadRequest(url: url, headers: headers)
        let response = try await privateLoads.runAsync { try await load(request, progress: { progress?($0) }) }
        if let disk, CacheControl(parsing: response.headers["cache-control"]).isPublic, HTTPCacheInfo.isStorable(response),
           (try? decoder.probe(response.data)) != nil {
            let info = HTTPCacheInfo(response: response, requestedURL: url, now: now(), defaultMaxAge: settings.defaultMaxAge)
            try? await disk.store(response.data, info: info, for: url)
        }
        return try await decodes.run { try decode(response.data, for: key) }
    }

    /// The `key` variant of `url` from memory or any disk copy, fresh or stale, without the network
    /// (``ImageRequest/CachePolicy/cacheOnly``).
    func cachedCopy(url: URL, key: ImageKey) async throws -> Bitmap {
        guard let disk, let entry = await disk.entry(for: url) else {
            if disk != nil { metrics.diskMisses.increment() }
            throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString)))
        }
        countDiskHit()
        let image = try await decodes.run { try decode(entry.data, for: key) }
        memory?.insert(image, for: key)
        return image
    }

    /// Decodes `data` for a decoded product (within the decode limit); checks the header of an encoded
    /// one (so that a corrupt disk copy is noticed here rather than by the image cache).
    private func make(_ product: FetchProduct, from data: Data) async -> Result<FetchOutput, any Error> {
        switch product {
        case .decoded(let key):
            do { return .success(.decoded(try await decodes.run { try decode(data, for: key) })) } catch { return .failure(error) }
        case .encoded:
            return Result { _ = try decoder.probe(data); return .encoded(data) }
        }
    }

    /// Decodes `data` into the variant `key` asks for (see ``ImageKey/mode`` and ``ImageKey/processing``).
    func decode(_ data: Data, for key: ImageKey) throws -> Bitmap {
        counters.withLock { $0.decodes += 1 }
        let start = ContinuousClock.now
        defer { metrics.decodeTime.recordSince(start) }
        if let processing = key.processing {
            do throws(ImageDecoder.RenderError) { return try decoder.render(data, processing: processing) } catch {
                if case .failed(let failure) = error { throw failure }
                throw error
            }
        }
        guard let size = key.size else { return try decoder.decode(data) }
        switch key.mode {
        case .aspectFit:
            let shown = try decoder.probe(data).displaySize
            let placed = ContentMode.aspectFit.placement(of: shown, in: Rect(size: size))
            let fitted = PixelSize(width: max(1, Int(placed.width.rounded())), height: max(1, Int(placed.height.rounded())))
            if fitted.width >= shown.width || fitted.height >= shown.height { return try decoder.decode(data) }
            return try decoder.thumbnail(data, size: fitted, mode: .fill)
        case .aspectFill, .fill:
            return try decoder.thumbnail(data, size: size, mode: key.mode)
        }
    }
}
