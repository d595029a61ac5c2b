@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The one entry point for remote images: memory cache, disk cache, download lanes and decoding
/// behind `image(for:)`, `prefetch(_:)` and `demote(_:)` (SGImageCache's API, in Swift concurrency).
///
/// ```swift
/// import TesseraHTTP                                   // ImageManager.shared, HTTPDataLoader
/// let image = try await ImageManager.shared.image(for: url, size: PixelSize(width: 200, height: 200))
/// await ImageManager.shared.prefetch(nextPageURLs)     // slow lane, one at a time, onto disk
/// await ImageManager.shared.demote(url)                // scrolled off screen: no longer urgent
///
/// let custom = try ImageManager(configuration: .init(disk: .init(directory: dir)), loader: HTTPDataLoader())
/// ```
///
/// ## How a request is served
/// 1. The memory cache, by URL and variant (size and mode). A hit is returned after a hop off the
///    caller's actor, so delivery is asynchronous even then: the caller never does cache work.
/// 2. Otherwise the request joins the **job** of its URL or starts one: one job per URL, shared by
///    every requester whatever their sizes (coalescing). The job reads the disk cache; a fresh copy is
///    used as is, a stale one with validators is revalidated (`304` keeps it), anything else is
///    downloaded on a lane slot (see `FetchScheduler` for the lane rules, and `FetchScheduling`).
///    A stale copy within the origin's `stale-while-revalidate` (or any stale copy, for
///    ``ImageRequest/CachePolicy/staleWhileRevalidate``) is answered at once and revalidated in the
///    background (``ImageTask/Event/refreshed(_:)`` reports a new image); one within `stale-if-error`
///    is answered when the origin fails (a refused connection, a timeout, a 5xx).
/// 3. The bytes are written to disk (when the response allows it and they look like an image), then
///    decoded once per requested variant in the job's task — never on the caller's thread — inserted
///    into the memory cache and handed to every requester of that variant.
///
/// With ``Configuration/tables`` set, a request of a fixed output size is also looked up in its image table
/// after the memory cache (when the manager knows the bytes its entries must come from), and in the job
/// once the bytes are there (then without decoding); a decoded variant is stored in its table
/// (``TableStorage``).
///
/// ## Cancellation
/// Cancelling the awaiting task (or a `RequestTicket`) resumes that requester with `TesseraError(.cancelled)`.
/// The download goes on while another requester or a prefetch still needs the URL; when the last one
/// goes, the job is removed from its queue, or its download task is cancelled (AsyncHTTPClient closes
/// the request).
///
/// ## Headers and credentials
/// Every load sends ``Configuration/headers`` with the request's own ``ImageRequest/headers`` over
/// them, then lets the ``RequestAuthorizing`` hook given to the initializer add or refresh credentials;
/// after a `401` the hook is asked once more and the load retried exactly once.
///
/// ## Credentials and caching
/// The manager's headers and its hook are one identity: what they obtain is cached and shared among all
/// the manager's requests, as in any private (single-user) HTTP cache (RFC 9111 §3.5 lets one store
/// responses to authorized requests). A request whose **own** headers carry credentials
/// (`Authorization`, `Cookie` or `Proxy-Authorization`) belongs to its caller alone: it is loaded by
/// itself, outside the lanes and the URL's shared job, never answered from the memory or disk cache,
/// and its response is never put in memory; it is stored on disk (and so shared) only when the server
/// marks it `Cache-Control: public`. Two requests for one URL with different `Authorization` headers
/// therefore never see each other's response. Other per-request headers keep the coalescing rule:
/// the request that starts a URL's job decides the headers sent.
public final class ImageManager: Sendable {
    /// The memory cache (a ``MemoryCache`` unless another was given).
    public let memoryCache: (any MemoryCaching)?
    /// The disk cache (a ``DiskCache`` when the configuration has one, unless another was given).
    public let diskCache: (any DiskCaching)?
    /// The loader.
    public let loader: any DataLoading
    let pipeline: FetchPipeline
    let jobs: FetchJobs

    /// Creates a manager with a ``MemoryCache`` and, when `configuration.disk` is set, a ``DiskCache``
    /// (swept every ``Configuration/diskSweepInterval``). `now` is the clock of both caches and of HTTP
    /// freshness (tests inject one). `authorizer` adds or refreshes credentials before each load (see
    /// ``RequestAuthorizing``).
    /// - Throws: ``/TesseraCore/TesseraError`` when the disk cache directory cannot be created.
    public convenience init(configuration: Configuration = Configuration(), loader: any DataLoading,
                            authorizer: (any RequestAuthorizing)? = nil,
                            decoder: ImageDecoder = ImageDecoder(), now: @escaping @Sendable () -> Date = { Date() }) throws(TesseraError) {
        let memory = MemoryCache(configuration: configuration.memory, now: now)
        let disk = try configuration.disk.map { (disk) throws(TesseraError) in
            try DiskCache(configuration: disk, logger: configuration.observability.logger, now: now)
        }
        if let disk, let interval = configuration.diskSweepInterval { disk.startSweeping(every: interval) }
        self.init(configuration: configuration, loader: loader, authorizer: authorizer, memoryCache: memory, diskCache: disk,
                  decoder: decoder, now: now)
    }

    /// Creates a manager with caches of your own (either may be `nil`); `configuration.memory` and
    /// `configuration.disk` are then ignored.
    public init(configuration: Configuration = Configuration(), loader: any DataLoading, authorizer: (any RequestAuthorizing)? = nil,
                memoryCache: (any MemoryCaching)?, diskCache: (any DiskCaching)?, decoder: ImageDecoder = ImageDecoder(),
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.memoryCache = memoryCache
        self.diskCache = diskCache
        self.loader = loader
        pipeline = FetchPipeline(loader: loader, memory: memoryCache, disk: diskCache, decoder: decoder,
                                 configuration: configuration, authorizer: authorizer, now: now)
        jobs = FetchJobs(pipeline: pipeline, urgentWidth: configuration.maximumConcurrentDownloads,
                         scheduling: configuration.scheduling)
    }

    // MARK: Getting images

    /// The image `request` asks for, decoded (downscaled to its size by its content mode when it has a
    /// size; see ``ImageKey/mode``). Runs off the caller's actor and resumes it when done, even on a
    /// memory hit. ``imageTask(for:)`` gives the same answer as an ``ImageResponse`` (where it came from,
    /// the HTTP status and headers), with a handle to reprioritise, observe and cancel it.
    /// - Parameters:
    ///   - request: the URL (for an entity request, the entity's source URL for its format, or
    ///     ``/TesseraCore/CacheFailure/noSourceURL(entityID:format:)`` when it has none), size, content
    ///     mode, priority, cache policy and options, cache key and headers.
    ///   - progress: called with bytes received of expected while the URL downloads, from the
    ///     loader's task.
    /// - Throws: ``/TesseraCore/TesseraError``: ``/TesseraCore/TesseraError/Reason/cancelled`` when the calling task is cancelled,
    ///   ``/TesseraCore/FetchFailure`` for network and offline failures (``/TesseraCore/FetchFailure/offlineMiss(url:)``
    ///   when the request may only be answered from caches that hold nothing), ``/TesseraCore/DecodingFailure`` for undecodable bytes.
    @concurrent
    public func image(for request: ImageRequest,
                      progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws(TesseraError) -> Bitmap {
        try await response(for: request, caller: CallerPriority(request.priority), progress: progress).image
    }

    /// The image at `url`: ``image(for:progress:)`` with `ImageRequest(url:size:contentMode:priority:)`.
    @concurrent
    public func image(for url: URL, size: PixelSize? = nil, mode: ContentMode = .fill, priority: FetchPriority = .urgent,
                      progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws(TesseraError) -> Bitmap {
        try await image(for: ImageRequest(url: url, size: size, contentMode: mode, priority: priority), progress: progress)
    }

    /// Starts `request` and returns its handle: ``ImageTask/cancel()``, a settable
    /// ``ImageTask/priority``, ``ImageTask/progress`` and ``ImageTask/events`` as `AsyncSequence`s, and
    /// its ``ImageTask/response``. The request runs as ``image(for:progress:)`` does, whether or not
    /// anyone awaits the response.
    ///
    /// ```swift
    /// let task = manager.imageTask(for: ImageRequest(url: url, priority: .low))
    /// task.priority = .veryHigh                    // scrolled into view: first in the urgent queue
    /// let response = try await task.response       // response.cacheType: .memory, .disk, .network, …
    /// ```
    public func imageTask(for request: ImageRequest) -> ImageTask {
        ImageTask(request: request, manager: self)
    }

    /// The answer to `request` for `caller` (whose level may change while it waits); counted in
    /// ``statistics``. A stale answer is revalidated in the background (``revalidate(_:caller:)``), which
    /// updates the caches.
    func response(for request: ImageRequest, caller: CallerPriority,
                  progress: (@Sendable (LoadProgress) -> Void)?) async throws(TesseraError) -> ImageResponse {
        let answer = try await answer(for: request, caller: caller, progress: progress)
        if let revalidation = answer.revalidation {
            Task.detached { [self] in _ = await revalidate(revalidation, caller: caller) }
        }
        return answer.response
    }

    /// The answer to `request` for `caller`, counted in ``statistics``, and what to revalidate when it is
    /// a stale copy answered at once (the caller starts the revalidation).
    func answer(for request: ImageRequest, caller: CallerPriority,
                progress: (@Sendable (LoadProgress) -> Void)?) async throws(TesseraError) -> Answer {
        let (url, key) = try Self.resolve(request)
        let recorder = pipeline.recorder
        recorder.request()
        var options = request.options
        if request.cachePolicy == .cacheOnly { options.insert(.returnCacheDataDontLoad) }
        let credentials = LoadRequest.carriesCredentials(request.headers)
        if !credentials, request.cachePolicy != .reloadIgnoringCache, !options.contains(.disableMemoryCacheReads),
           let hit = memoryCache?.image(for: key) {
            recorder.memoryHit()
            return Answer(response: ImageResponse(image: hit, request: request, cacheType: .memory))
        }
        recorder.memoryMiss()
        if !credentials, request.cachePolicy != .reloadIgnoringCache, !options.contains(.disableDiskCacheReads),
           let entry = pipeline.tables?.cachedImage(for: key) {
            recorder.ended(.table)
            return Answer(response: ImageResponse(pixels: entry, request: request, cacheType: .table))
        }
        let jobKey = ImageJobKey(image: key, data: DataKey(url: key.url, readsDisk: !options.contains(.disableDiskCacheReads),
                                                           writesDisk: !options.contains(.disableDiskCacheWrites),
                                                           stale: request.cachePolicy == .staleWhileRevalidate ? .always : .asOriginAllows),
                                 writesMemory: !options.contains(.disableMemoryCacheWrites))
        do {
            try Task.checkCancellation()
            let decoded: DecodedImage
            if credentials {
                // Private to this caller (see "Credentials and caching"): nothing cached is shared with it.
                if options.contains(.returnCacheDataDontLoad) { throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString))) }
                decoded = try await pipeline.privateImage(url: url, key: jobKey, headers: request.headers, progress: progress)
            } else {
                if request.cachePolicy == .reloadIgnoringCache {
                    pipeline.tables?.forgetSource(for: key.url)
                    memoryCache?.removeImage(for: key)
                    await diskCache?.remove(key.url)
                }
                if options.contains(.returnCacheDataDontLoad) {
                    decoded = try await pipeline.cachedCopy(url: url, key: jobKey)
                } else {
                    decoded = try await jobs.image(for: jobKey, source: url, caller: caller, headers: request.headers, progress: progress)
                }
            }
            recorder.ended(decoded.cacheType)
            let revalidation = decoded.needsRevalidation ? Revalidation(request: request, url: url, key: jobKey) : nil
            return Answer(response: decoded.response(to: request), revalidation: revalidation)
        } catch {
            let typed = Self.typed(error, url: url)
            recorder.ended(nil, cancelled: typed.reason == .cancelled)
            throw typed
        }
    }

    /// The encoded bytes at `url` from the disk cache or the network, through the lanes; nothing is decoded
    /// (the header is checked). Used by the ``/TesseraTables/SourceImageProviding`` conformance.
    /// - Throws: as ``image(for:progress:)``.
    @concurrent
    public func data(for url: URL, priority: FetchPriority = .urgent,
                     progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws(TesseraError) -> Data {
        try await dataResponse(for: url, priority: priority, progress: progress).data
    }

    /// ``data(for:priority:progress:)`` with the bytes' entity tag and the layer that answered: what a
    /// caller that versions what it makes from the bytes needs (the tag names the bytes without hashing
    /// them). Concurrent calls for one URL share one job, as every request of the manager does. A stale
    /// disk copy within the origin's `stale-while-revalidate` is answered at once and revalidated in the
    /// background (the next call gets what that revalidation stored).
    /// - Throws: as ``image(for:progress:)``.
    @concurrent
    public func dataResponse(for url: URL, priority: FetchPriority = .urgent,
                             progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws(TesseraError) -> DataResponse {
        do {
            try Task.checkCancellation()
            let caller = CallerPriority(priority)
            let fetched = try await jobs.data(for: DataKey(url: url), source: url, caller: caller, progress: progress)
            if fetched.needsRevalidation {
                Task.detached { [self] in await revalidateData(of: url, caller: caller) }
            }
            return DataResponse(data: fetched.data, etag: fetched.etag, cacheType: fetched.cacheType, lastModified: fetched.lastModified)
        } catch {
            throw Self.typed(error, url: url)
        }
    }

    /// Every frame of the animated GIF or WebP at `url` (a still image as one frame), each through
    /// `processing` with one geometry (``/TesseraImaging/ImageDecoder/renderAnimation(_:processing:limits:watermark:)``),
    /// with its duration and the loop count: what a view that plays animations shows. The bytes come
    /// through ``data(for:priority:progress:)`` (the disk cache, one download for concurrent callers); the
    /// frames are decoded off the caller's actor under the manager's ``/TesseraImaging/DecodingLimits``
    /// (frames and pixels over all frames), and are not kept in the memory cache.
    ///
    /// ```swift
    /// let animation = try await manager.animation(for: url, processing: ImageProcessing(width: 200))
    /// for frame in animation.frames { show(frame.image, for: frame.duration) }
    /// ```
    /// - Throws: ``/TesseraImaging/ImageDecoder/RenderError/failed(_:)`` with the fetch's error or the decoder's
    ///   (an animation over the limits), ``/TesseraImaging/ImageDecoder/RenderError/invalid(_:)`` for a refused processing.
    @concurrent
    public func animation(for url: URL, processing: ImageProcessing = ImageProcessing(), priority: FetchPriority = .urgent,
                          progress: (@Sendable (LoadProgress) -> Void)? = nil) async throws(ImageDecoder.RenderError) -> Animation {
        let data: Data
        do throws(TesseraError) { data = try await self.data(for: url, priority: priority, progress: progress) } catch {
            throw .failed(error)
        }
        return try pipeline.decoder.renderAnimation(data, processing: processing)
    }

    /// Callback form of ``image(for:progress:)`` (SGImageCache's `getImageForURL:thenDo:`): `completion`
    /// is always called later from another task, never before this method returns.
    @discardableResult
    public func loadImage(for request: ImageRequest, progress: (@Sendable (LoadProgress) -> Void)? = nil,
                          completion: @escaping @Sendable (Result<Bitmap, TesseraError>) -> Void) -> RequestTicket {
        RequestTicket(task: Task.detached { [self] in
            let result: Result<Bitmap, TesseraError>
            do throws(TesseraError) { result = .success(try await image(for: request, progress: progress)) } catch { result = .failure(error) }
            completion(result)
        })
    }

    /// ``loadImage(for:progress:completion:)`` with `ImageRequest(url:size:contentMode:priority:)`.
    @discardableResult
    public func loadImage(for url: URL, size: PixelSize? = nil, mode: ContentMode = .fill, priority: FetchPriority = .urgent,
                          progress: (@Sendable (LoadProgress) -> Void)? = nil,
                          completion: @escaping @Sendable (Result<Bitmap, TesseraError>) -> Void) -> RequestTicket {
        loadImage(for: ImageRequest(url: url, size: size, contentMode: mode, priority: priority), progress: progress,
                  completion: completion)
    }

    /// The image `request` asks for if the memory cache holds it (no I/O, no decoding); `nil` also when
    /// the request has no URL, or credentials of its own ("Credentials and caching").
    public func cachedImage(for request: ImageRequest) -> Bitmap? {
        guard !LoadRequest.carriesCredentials(request.headers), let (_, key) = try? Self.resolve(request) else { return nil }
        return memoryCache?.image(for: key)
    }

    /// The answer to `request` if the memory cache or its image table (``Configuration/tables``) holds it:
    /// no I/O, no decoding, no copy (a table's answer is a ``/TesseraTables/TableImage`` in ``ImageResponse/pixels``).
    /// The table answers once the manager knows the bytes the entry must come from (a request for the image
    /// ran in this process; ``TableStorage``); `nil` otherwise, or when the request has no URL, or credentials of
    /// its own. What a frame loop asks before starting ``imageTask(for:)``. Not counted in ``statistics``.
    public func cachedResponse(for request: ImageRequest) -> ImageResponse? {
        guard !LoadRequest.carriesCredentials(request.headers), let (_, key) = try? Self.resolve(request) else { return nil }
        if !request.options.contains(.disableMemoryCacheReads), let image = memoryCache?.image(for: key) {
            return ImageResponse(image: image, request: request, cacheType: .memory)
        }
        guard !request.options.contains(.disableDiskCacheReads), let entry = pipeline.tables?.cachedImage(for: key) else { return nil }
        return ImageResponse(pixels: entry, request: request, cacheType: .table)
    }

    /// The image tables of ``Configuration/tables`` open now (one per size and style requested so far), for
    /// their usage and maintenance; empty without tables.
    public var imageTables: [ImageTable] { pipeline.tables?.openTables ?? [] }

    /// The image for `url` at this variant if the memory cache holds it (no I/O, no decoding).
    public func cachedImage(for url: URL, size: PixelSize? = nil, mode: ContentMode = .fill) -> Bitmap? {
        cachedImage(for: ImageRequest(url: url, size: size, contentMode: mode))
    }

    /// The URL to load and the memory-cache key of `request`, whose ``ImageKey/url`` is the request's
    /// identity in every cache (``identity(of:url:)``).
    static func resolve(_ request: ImageRequest) throws(TesseraError) -> (URL, ImageKey) {
        let url: URL
        switch request.source {
        case .url(let address):
            url = address
        case .entity(let entity, let format):
            guard let address = entity.sourceImageURL(for: format) else {
                throw TesseraError(.cache(.noSourceURL(entityID: entity.entityID.uuidString, format: format.name)))
            }
            url = address
        }
        let identity = identity(of: request.cacheKey, url: url)
        var key = request.processing.map { ImageKey(url: identity, processing: $0) }
            ?? ImageKey(url: identity, size: request.size, mode: request.contentMode)
        key.processors = request.processors
        return (url, key)
    }

    /// The identity in the caches of an image at `url` with `cacheKey`: `url` itself without a key,
    /// otherwise `tessera-cache-key:` and the key, percent-encoded (the memory cache's ``ImageKey/url``,
    /// the disk cache's URL, the jobs' key).
    public static func identity(of cacheKey: String?, url: URL) -> URL {
        guard let cacheKey,
              let encoded = cacheKey.addingPercentEncoding(withAllowedCharacters: cacheKeyCharacters),
              let identity = URL(string: "tessera-cache-key:" + encoded) else { return url }
        return identity
    }

    /// The characters a cache key keeps unencoded in its identity, made once (a lookup would otherwise build
    /// the set every time).
    private static let cacheKeyCharacters = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~/"))

    /// Any error of a request for `url` as a ``/TesseraCore/TesseraError`` (a custom loader's own error becomes a
    /// ``/TesseraCore/FetchFailure/transport(url:message:)``).
    private static func typed(_ error: any Error, url: URL) -> TesseraError {
        TesseraError.wrapping(error) { TesseraError(.fetching(.transport(url: url.absoluteString, message: "\($0)")), underlying: $0) }
    }

    /// Whether the disk cache holds bytes for `url` (from its in-memory index: no I/O). For a request
    /// with a cache key, ``cache``'s `contains(_:in:)`.
    public func isCachedOnDisk(_ url: URL) -> Bool { diskCache?.contains(url) ?? false }

    // MARK: Priorities

    /// Queues `urls` on the slow lane, to be downloaded one at a time onto disk (into memory at full size
    /// when there is no disk cache) while no urgent download runs. URLs already on disk are skipped.
    /// Returns once they are registered, not when they are downloaded.
    public func prefetch(_ urls: [URL]) async {
        await prefetch(urls.map { ImageRequest(url: $0, priority: .prefetch) })
    }

    /// Queues `requests` on the slow lane like ``prefetch(_:)-([URL])``; without a disk cache each is
    /// decoded into memory at its size and content mode. The headers of each request are sent.
    /// Requests with credentials of their own are skipped: nothing they load is kept for later
    /// ("Credentials and caching").
    public func prefetch(_ requests: [ImageRequest]) async {
        // The first request for each image decides its variant and headers.
        var items: [FetchJobs.Prefetch] = []
        var seen: Set<URL> = []
        for request in requests where !LoadRequest.carriesCredentials(request.headers) {
            guard let (url, key) = try? Self.resolve(request), seen.insert(key.url).inserted else { continue }
            let options = request.options
            let data = DataKey(url: key.url, readsDisk: !options.contains(.disableDiskCacheReads),
                               writesDisk: !options.contains(.disableDiskCacheWrites))
            items.append(FetchJobs.Prefetch(key: ImageJobKey(image: key, data: data, writesMemory: !options.contains(.disableMemoryCacheWrites)),
                                            source: url, headers: request.headers))
        }
        jobs.prefetch(items)
    }

    /// Returns once every prefetch registered so far (and any registered meanwhile) has ended, downloaded
    /// or failed: what a command-line program awaits before it exits.
    ///
    /// ```swift
    /// await manager.prefetch(urls)
    /// await manager.prefetchesFinished()      // every URL is on disk now, or failed
    /// ```
    public func prefetchesFinished() async {
        await jobs.waitUntil { $0.prefetches.isEmpty }
    }

    /// Forgets the prefetches of `urls` (images whose identity is the URL: requests without a cache key);
    /// a download nobody awaits is cancelled.
    public func cancelPrefetch(_ urls: [URL]) async {
        jobs.cancelPrefetch(urls)
    }

    /// Moves the urgent requests for `url` to the slow lane (their callers keep waiting). A queued
    /// download goes to the front of the slow queue; a running one finishes.
    public func demote(_ url: URL) async {
        jobs.demote(url)
    }

    /// The lanes and requesters right now.
    public func queueSnapshot() async -> FetchQueueSnapshot {
        jobs.snapshot()
    }

    /// Returns once `condition` holds for the queue (checked now and after every change): lets tests and
    /// tools wait for a state instead of sleeping.
    @_spi(Internal) public func waitForQueue(where condition: @escaping @Sendable (FetchQueueSnapshot) -> Bool) async {
        await jobs.waitUntil(condition)
    }

    // MARK: Settings and maintenance

    /// The configuration the manager was made with; it never changes. Tune the caches through their
    /// own API (``memoryCache``, ``diskCache``: `setLimits`, `statistics`).
    public var configuration: ImageManager.Configuration { pipeline.settings }

    /// How the manager's requests went, since it was made: the one place to ask (``FetchStatistics``
    /// explains the counters and how they add up).
    ///
    /// ```swift
    /// let counts = manager.statistics
    /// print(counts.requests, counts.memoryHits, counts.diskResponses, counts.networkResponses)
    /// ```
    public var statistics: FetchStatistics { pipeline.recorder.statistics }

    /// Empties the memory cache.
    public func clearMemoryCache() { memoryCache?.removeAll() }

    /// Empties the disk cache (and forgets which bytes the image tables' entries were made from, so that
    /// they answer again only once the bytes were loaded again and are the same).
    public func clearDiskCache() async throws(TesseraError) {
        pipeline.tables?.forgetSources()
        try await diskCache?.removeAll()
    }
}
