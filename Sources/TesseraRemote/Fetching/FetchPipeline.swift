@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation
import Logging

/// The parts of an ``ImageManager`` that its jobs (``DataJob``, ``ImageJob``) work with: loader, caches,
/// decoder, settings, authorizer, the decode limit and the ``FetchRecorder``; and the steps they share:
/// an authorized load, a decode, a corrupt disk copy fetched again. Requests with credentials of their
/// own and cache-only requests run here directly, outside the jobs.
final class FetchPipeline: Sendable {
    let loader: any DataLoading
    let memory: (any MemoryCaching)?
    let disk: (any DiskCaching)?
    let decoder: ImageDecoder
    let settings: ImageManager.Configuration
    let authorizer: (any RequestAuthorizing)?
    /// The image tables of URL requests of a fixed size (``ImageManager/Configuration/tables``), if any.
    let tables: URLTables?
    /// The one owner of the manager's statistics and metrics.
    let recorder: FetchRecorder
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
        recorder = FetchRecorder(observability: configuration.observability)
        if let storage = configuration.tables {
            tables = URLTables(settings: storage, observability: configuration.observability)
        } else {
            tables = nil
        }
        decodes = ParallelismLimit(width: configuration.maximumConcurrentDecodes)
        privateLoads = ParallelismLimit(width: max(1, configuration.maximumConcurrentDownloads))
    }

    var logger: Logger { settings.observability.logger }

    /// `make` applied to the bytes of `url` from `bytes`; when bytes from the disk cache fail to make,
    /// the copy is removed and `bytes(true)` asked once more (it then downloads).
    func make<T: Sendable>(from url: URL, bytes: @Sendable (_ again: Bool) async throws -> FetchedData,
                           _ make: @Sendable (FetchedData) async throws -> T) async throws -> T {
        let first = try await bytes(false)
        do {
            return try await make(first)
        } catch where first.fromDisk && !Task.isCancelled {
            recorder.corruptRefetch()
            logger.warning("disk cache copy does not decode; removed and downloading again", metadata: [
                "url": "\(url.absoluteString)", "error": "\(error)",
            ])
            await disk?.remove(url)
            return try await make(try await bytes(true))
        }
    }

    /// The request for `url` with the manager's limits, and its headers under the request's own.
    func loadRequest(url: URL, headers: [String: String]) -> LoadRequest {
        LoadRequest(url: url, timeout: settings.requestTimeout, maximumBytes: settings.maximumResponseBytes,
                    headers: LoadRequest.headers(settings.headers, overriddenBy: headers))
    }

    /// Loads `request` through the authorizer (``authorizedLoad(_:progress:)``), again after a failure
    /// that ``RetryPolicy`` retries, as often as ``ImageManager/Configuration/retry`` allows, waiting
    /// longer each time.
    func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        try await settings.retry.run({ () async throws(any Error) -> LoadResponse in try await authorizedLoad(request, progress: progress) },
                                     retryingIf: { RetryPolicy.isRetryable($0) && !Task.isCancelled },
                                     cancelled: { CancellationError() }) { error, retry, delay in
            recorder.retry()
            logger.info("load failed; retrying", metadata: [
                "url": "\(request.url.absoluteString)", "error": "\(error)", "retry": "\(retry)", "delay": "\(delay)",
            ])
        }
    }

    /// Loads `request` through the authorizer, if any: authorized before it is sent, and after a `401`
    /// authorized again and sent exactly once more (``RequestAuthorizing``'s contract).
    private func authorizedLoad(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
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
        recorder.loadStarted()
        logger.debug("download started", metadata: ["url": "\(address)", "conditional": "\(request.isConditional)"])
        let start = ContinuousClock.now
        do {
            let response = try await loader.load(request, progress: progress)
            recorder.loadFinished(since: start, bytes: response.data.count)
            logger.debug("download finished", metadata: [
                "url": "\(address)", "status": "\(response.statusCode)", "bytes": "\(response.data.count)",
            ])
            return response
        } catch {
            if !(error is CancellationError) {
                recorder.loadFailed()
                logger.info("download failed", metadata: ["url": "\(address)", "error": "\(error)"])
            }
            throw error
        }
    }

    /// The `key` variant of `url` for a request with credentials of its own
    /// (``ImageManager``, "Credentials and caching"): loaded outside the lanes and the job of its URL,
    /// never read from a cache, stored on disk only when the response is `Cache-Control: public`,
    /// never put in the memory cache.
    func privateImage(url: URL, key: ImageJobKey, headers: [String: String],
                      progress: (@Sendable (LoadProgress) -> Void)?) async throws -> DecodedImage {
        if LocalDataLoader.handles(url) {
            let response = try LocalDataLoader().load(loadRequest(url: url, headers: headers))
            return try await decoded(FetchedData(data: response.data, cacheType: .local), for: key.image)
        }
        if settings.offline { throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString))) }
        let request = loadRequest(url: url, headers: headers)
        let response = try await privateLoads.runAsync { try await load(request, progress: { progress?($0) }) }
        if key.data.writesDisk, let disk, CacheControl(parsing: response.headers["cache-control"]).isPublic,
           HTTPCacheInfo.isStorable(response), (try? decoder.probe(response.data)) != nil {
            let info = HTTPCacheInfo(response: response, requestedURL: key.data.url, now: now(), defaultMaxAge: settings.defaultMaxAge)
            try? await disk.store(response.data, info: info, for: key.data.url)
        }
        var answer = response
        answer.data = Data()
        return try await decoded(FetchedData(data: response.data, cacheType: .network, response: answer), for: key.image)
    }

    /// The `key` variant of `url` from any disk copy, fresh or stale, without the network
    /// (``ImageRequest/Options/returnCacheDataDontLoad``); a `file:` or `data:` URL is read.
    func cachedCopy(url: URL, key: ImageJobKey) async throws -> DecodedImage {
        if LocalDataLoader.handles(url) { return try await privateImage(url: url, key: key, headers: [:], progress: nil) }
        guard key.data.readsDisk, let disk, let entry = await disk.entry(for: key.data.url) else {
            if key.data.readsDisk, disk != nil { recorder.diskMiss() }
            throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString)))
        }
        recorder.diskHit()
        let decoded = try await image(from: FetchedData(data: entry.data, cacheType: .disk), for: key)
        if key.writesMemory, let bitmap = decoded.bitmap { memory?.insert(bitmap, for: key.image) }
        return decoded
    }

    /// The variant `key` asks for, made from `fetched`: from its table when the table holds an entry made
    /// from these bytes and the request may read the disk layers, else decoded (``decoded(_:for:)``) and, when
    /// the request may write them, stored in the table. The source id of the bytes is noted either way
    /// (``URLTables``). Without tables, or for a variant of no fixed size, simply decoded.
    func image(from fetched: FetchedData, for key: ImageJobKey) async throws -> DecodedImage {
        guard let tables, let place = tables.place(for: key.image) else { return try await decoded(fetched, for: key.image) }
        let source = URLTables.sourceID(of: fetched.data)
        tables.noteSource(source, for: key.data.url)
        if key.data.readsDisk, let entry = tables.image(at: place, sourceID: source) {
            return DecodedImage(pixels: entry, cacheType: .table, sourceFormat: try? decoder.probe(fetched.data).format,
                                response: fetched.response, needsRevalidation: fetched.needsRevalidation)
        }
        let decoded = try await decoded(fetched, for: key.image)
        if key.data.writesDisk, let bitmap = decoded.bitmap { tables.store(bitmap, at: place, sourceID: source) }
        return decoded
    }

    /// Decodes `fetched` into the variant `key` asks for, within the decode limit, and notes the file
    /// format it was.
    func decoded(_ fetched: FetchedData, for key: ImageKey) async throws -> DecodedImage {
        let image = try await decodes.run { try decode(fetched.data, for: key) }
        return DecodedImage(pixels: image, cacheType: fetched.cacheType, sourceFormat: try? decoder.probe(fetched.data).format,
                            response: fetched.response, needsRevalidation: fetched.needsRevalidation)
    }

    /// Decodes `data` into the variant `key` asks for (see ``ImageKey/mode`` and ``ImageKey/processing``),
    /// then runs its ``ImageKey/processors``.
    func decode(_ data: Data, for key: ImageKey) throws -> Bitmap {
        try recorder.decode {
            let image = try decodeUncounted(data, for: key)
            return key.processors.isEmpty ? image : try ImageProcessor.apply(key.processors, to: image)
        }
    }

    private func decodeUncounted(_ data: Data, for key: ImageKey) throws -> Bitmap {
        func render(_ processing: ImageProcessing) throws -> Bitmap {
            do throws(ImageDecoder.RenderError) { return try decoder.render(data, processing: processing) } catch {
                if case .failed(let failure) = error { throw failure }
                throw error
            }
        }
        if let processing = key.processing { return try render(processing) }
        guard let size = key.size else { return try decoder.decode(data) }
        switch key.mode {
        case .fit:
            let shown = try decoder.probe(data).displaySize
            let placed = ContentMode.fit.placement(of: shown, in: Rect(size: size))
            let fitted = PixelSize(width: max(1, Int(placed.width.rounded())), height: max(1, Int(placed.height.rounded())))
            if fitted.width >= shown.width || fitted.height >= shown.height { return try decoder.decode(data) }
            return try decoder.thumbnail(data, size: fitted, mode: .stretch)
        case .fill, .stretch:
            return try decoder.thumbnail(data, size: size, mode: key.mode)
        case .fillDown, .pad, .cover:   // the processing's own modes: its geometry for a box of `size`
            return try render(ImageProcessing(width: size.width, height: size.height, mode: key.mode))
        }
    }
}
