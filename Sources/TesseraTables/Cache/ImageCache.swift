@_spi(Internal) import TesseraImaging
import CoreMetrics
import Foundation
import Logging

/// The public face of the image tables: formats and families, entities, source images on demand,
/// request coalescing and cancellation (Fast Image Cache's `FICImageCache`, in Swift concurrency).
///
/// ```swift
/// let cache = try ImageCache(formats: [small, medium], directory: dir, provider: myProvider)
/// if let image = cache.cachedImage(for: user, format: small) { show(image) }   // no I/O, no decode
/// let image = try await cache.image(for: user, format: medium)                // loads on a miss
/// ```
///
/// Formats are addressed by the ``ImageFormat`` values the cache was made with: a typed handle, so a
/// misspelt name cannot silently miss. A format this cache was not made with (or one with the same
/// name but another definition) is unknown: lookups answer `nil`, loads and stores throw
/// ``/TesseraCore/CacheFailure/unknownFormat(_:)``. ``format(named:)`` resolves a name (from a command line or a
/// configuration file) once.
///
/// ## Threading model
/// - ``cachedImage(for:format:)`` and ``imageExists(for:format:)`` are synchronous and safe from any
///   thread: a hash lookup in a memory-mapped table, never I/O, never a decode.
/// - ``image(for:format:priority:)`` returns at once on a hit. On a miss it joins or starts **one request per
///   source URL**: a detached task asks the provider once, decodes once (downscaled just enough for
///   the largest configured format), draws into every requested format and — when the provider agrees —
///   every format of their families, then resumes every waiter. Decoding and drawing never run on the
///   caller's actor; the awaiting caller resumes on its own executor.
/// - Fills of different URLs decode and draw in parallel, at most
///   ``Configuration/maximumConcurrentFills`` at a time (the number of cores by default); waiting for
///   the provider does not count against that limit.
/// - Cancelling (``cancelRequest(for:format:)`` or cancelling the awaiting task) resumes that waiter
///   with `TesseraError(.cancelled)`. When the last waiter of a URL is gone before its source arrived, the
///   load task is cancelled and the provider's `cancelSourceImage(at:)` is called exactly once.
public final class ImageCache: Sendable {
    /// How an ``ImageCache`` works, as one plain value.
    public struct Configuration: Sendable, Hashable {
        /// Fills (decode + draw of one source image) that may run at once. The default is the number
        /// of active cores.
        public var maximumConcurrentFills: Int
        /// Where the cache's and its tables' logs and metrics go (docs/OBSERVABILITY.md); nothing by
        /// default. Not part of equality (see `Observability`).
        public var observability: Observability

        /// Creates a configuration.
        public init(maximumConcurrentFills: Int = ProcessInfo.processInfo.activeProcessorCount,
                    observability: Observability = .default) {
            self.maximumConcurrentFills = max(1, maximumConcurrentFills)
            self.observability = observability
        }
    }

    /// The configuration the cache was made with.
    public let configuration: Configuration
    /// The configured formats by name.
    public let formats: [String: ImageFormat]
    /// The provider of source images.
    public let provider: any SourceImageProviding
    /// The decoder used for encoded source images.
    public let decoder: ImageDecoder
    let tables: [String: ImageTable]
    /// The load of each source URL, shared by every entity and format waiting for it.
    private let loads: TaskPool<URL, RequestState.Waiter, TableImage>
    private let state = LockedValue(RequestState())
    /// Bounds the decoding and drawing of all fills together.
    private let fills: ParallelismLimit
    /// `tessera_image_cache_decode_seconds`: decoding one source image for a fill.
    private let decodeTime: CoreMetrics.Timer
    /// `tessera_image_cache_draw_seconds`: an entity drawing into one format's slot.
    private let drawTime: CoreMetrics.Timer
    /// `tessera_image_cache_source_failures_total`: fills that failed (provider, decoding).
    private let sourceFailures: Counter

    /// Opens (or creates) one image table per format in `directory`.
    /// - Throws: ``/TesseraCore/CacheFailure/duplicateFormat(_:)`` when two formats share a name, or what
    ///   ``ImageTable/init(format:directory:fileCheckInterval:observability:)`` throws.
    public init(formats: [ImageFormat], directory: URL, provider: any SourceImageProviding,
                decoder: ImageDecoder = ImageDecoder(), configuration: Configuration = Configuration()) throws(TesseraError) {
        var byName: [String: ImageFormat] = [:]
        var tables: [String: ImageTable] = [:]
        for format in formats {
            guard byName[format.name] == nil else { throw TesseraError(.cache(.duplicateFormat(format.name))) }
            byName[format.name] = format
            tables[format.name] = try ImageTable(format: format, directory: directory, observability: configuration.observability)
        }
        self.formats = byName
        self.tables = tables
        self.provider = provider
        self.decoder = decoder
        self.configuration = configuration
        fills = ParallelismLimit(width: configuration.maximumConcurrentFills)
        loads = TaskPool(onAbandon: { [provider] url in provider.cancelSourceImage(at: url) })
        decodeTime = configuration.observability.timer("tessera_image_cache_decode_seconds")
        drawTime = configuration.observability.timer("tessera_image_cache_draw_seconds")
        sourceFailures = configuration.observability.counter("tessera_image_cache_source_failures_total")
    }

    /// The table behind a format, for tools and statistics; `nil` for an unknown format.
    public func table(for format: ImageFormat) -> ImageTable? {
        isConfigured(format) ? tables[format.name] : nil
    }

    /// Whether this cache was made with exactly `format`.
    public func isConfigured(_ format: ImageFormat) -> Bool { formats[format.name] == format }

    /// The formats of `family`.
    public func formats(inFamily family: String) -> [ImageFormat] {
        formats.values.filter { $0.family == family }.sorted { $0.name < $1.name }
    }

    // MARK: Retrieval

    /// The cached image when present for the entity's current source image, else `nil` (also for an
    /// unknown format). Never waits for I/O or decodes: safe on a frame/main thread.
    public func cachedImage(for entity: some ImageEntity, format: ImageFormat) -> TableImage? {
        table(for: format)?.image(for: entity.entityID, sourceID: entity.sourceImageID)
    }

    /// Whether the image is cached for the entity's current source image.
    public func imageExists(for entity: some ImageEntity, format: ImageFormat) -> Bool {
        table(for: format)?.contains(entityID: entity.entityID, sourceID: entity.sourceImageID) ?? false
    }

    /// The image, loading the source through the provider on a miss (see the type's threading model).
    /// `priority` is the level the source is wanted at: the provider is asked with the highest level
    /// among the requests waiting for the source when the load starts (``FetchPriority/ofCurrentRequest``;
    /// `ImageManager` as the provider downloads on that level's lane).
    /// - Throws: ``/TesseraCore/TesseraError``: ``/TesseraCore/TesseraError/Reason/cancelled`` when cancelled; `.cache` when the
    ///   format is unknown, the entity has no URL, or the source cannot be loaded; `.decoding` or
    ///   `.storage` when it cannot be decoded or stored.
    public func image(for entity: some ImageEntity, format: ImageFormat,
                      priority: FetchPriority = .normal) async throws(TesseraError) -> TableImage {
        try checkConfigured(format)
        if let hit = cachedImage(for: entity, format: format) { return hit }
        guard let url = entity.sourceImageURL(for: format) else {
            throw TesseraError(.cache(.noSourceURL(entityID: entity.entityID.uuidString, format: format.name)))
        }
        do {
            return try await loads.value(for: url, request: RequestState.Waiter(entity: entity, format: format, priority: priority),
                                         run: { [self] load in await fill(load) }).value
        } catch {
            throw Self.typed(error, url: url)
        }
    }

    /// Callback form of ``image(for:format:priority:)``: the request is registered before this method returns, so
    /// ``cancelRequest(for:format:)`` or the ticket's `cancel()` right after it always takes effect.
    /// `completion` is called exactly once, later, from another task (`TesseraError(.cancelled)` when
    /// cancelled, ``/TesseraCore/CacheFailure/unknownFormat(_:)`` for an unknown format).
    @discardableResult
    public func loadImage(for entity: some ImageEntity, format: ImageFormat,
                          completion: @escaping @Sendable (Result<TableImage, TesseraError>) -> Void) -> RequestTicket {
        state.withLock { state in
            let id = state.makeTicketID()
            let task = Task.detached { [self] in
                let result: Result<TableImage, TesseraError>
                do throws(TesseraError) { result = .success(try await image(for: entity, format: format)) } catch { result = .failure(error) }
                _ = self.state.withLock { $0.tickets.removeValue(forKey: id) }
                completion(result)
            }
            state.tickets[id] = RequestState.Ticket(entityID: entity.entityID, format: format.name, task: task)
            return RequestTicket(task: task)
        }
    }

    /// Cancels every pending request of `entity` for `format`, including those started with
    /// ``loadImage(for:format:completion:)`` that have not begun to run. Their callers get
    /// `TesseraError(.cancelled)`. (A request made by awaiting ``image(for:format:priority:)`` registers when that call
    /// starts running; to cancel one reliably before then, cancel the awaiting task.)
    public func cancelRequest(for entity: some ImageEntity, format: ImageFormat) {
        let id = entity.entityID, name = format.name
        let tasks = state.withLock { $0.tickets.values.filter { $0.entityID == id && $0.format == name }.map(\.task) }
        for task in tasks { task.cancel() }
        loads.cancelWaiters { _, waiter in waiter.entity.entityID == id && waiter.format.name == name }
    }

    // MARK: Storing and deleting

    /// Stores an image obtained elsewhere, drawn by the entity into `format`'s slot.
    /// - Throws: ``/TesseraCore/CacheFailure/unknownFormat(_:)``, or what drawing and storing throw.
    @discardableResult
    public func setImage(_ image: Bitmap, for entity: some ImageEntity, format: ImageFormat) throws(TesseraError) -> TableImage {
        try checkConfigured(format)
        do {
            return try store(image, entity: entity, format: format)
        } catch {
            // The entity's own drawing may throw anything: it is a drawing failure with that cause.
            throw TesseraError.wrapping(error) { TesseraError(.drawing(message: "\($0)"), underlying: $0) }
        }
    }

    /// Removes the entity's image in `format` (nothing for an unknown format).
    public func deleteImage(for entity: some ImageEntity, format: ImageFormat) {
        table(for: format)?.delete(entityID: entity.entityID)
    }

    /// Empties every table.
    public func reset() throws(TesseraError) {
        for table in tables.values { try table.reset() }
    }

    // MARK: Internals

    /// The configured format named `name`: resolve names once, then pass the ``ImageFormat`` itself.
    /// - Throws: ``/TesseraCore/CacheFailure/unknownFormat(_:)``.
    public func format(named name: String) throws(TesseraError) -> ImageFormat {
        guard let format = formats[name] else { throw TesseraError(.cache(.unknownFormat(name))) }
        return format
    }

    private func checkConfigured(_ format: ImageFormat) throws(TesseraError) {
        guard isConfigured(format) else { throw TesseraError(.cache(.unknownFormat(format.name))) }
    }

    private func store(_ source: Bitmap, entity: any ImageEntity, format: ImageFormat) throws -> TableImage {
        guard let table = tables[format.name] else { throw TesseraError(.cache(.unknownFormat(format.name))) }
        return try table.store(entityID: entity.entityID, sourceID: entity.sourceImageID) { view in
            try drawTime.time {
                try DrawingContext.draw(into: view) { context in try entity.draw(source, in: context, for: format) }
            }
        }
    }

    /// The load of one source URL: asks the provider once (for the first waiter's entity and format),
    /// decodes once, then commits and serves every waiter, including those who join while drawing is
    /// under way. Abandoned before it commits, it is cancelled (and the provider told) by the pool.
    private func fill(_ load: TaskPool<URL, RequestState.Waiter, TableImage>.Job) async {
        let url = load.key
        guard let first = load.requests.first else { return }
        let source: Bitmap
        do {
            let level = load.requests.map(\.priority).max() ?? first.priority
            let loaded = try await FetchPriority.$ofCurrentRequest.withValue(level) {
                try await provider.sourceImage(at: url, for: first.entity, format: first.format)
            }
            try Task.checkCancellation()
            source = try await fills.run { try decode(loaded) }
        } catch {
            let failure = Self.typed(error, url: url)
            if failure.reason != .cancelled {
                sourceFailures.increment()
                configuration.observability.logger.warning("image cache could not load a source image", metadata: [
                    "url": "\(url.absoluteString)", "error": "\(failure)",
                ])
            }
            load.finish(with: .failure(failure))
            return
        }
        load.commit()
        while true {
            let waiters = load.takeWaitersOrEnd()
            if waiters.isEmpty { return }
            // `run` throws only when cancelled before `serve` ran; a committed load serves its waiters anyway.
            do { try await fills.run { serve(waiters, with: source) } } catch { serve(waiters, with: source) }
        }
    }

    /// Draws `source` into each waiter's format (and family) once per entity and format, then resumes them.
    private func serve(_ waiters: [TaskPool<URL, RequestState.Waiter, TableImage>.Waiter], with source: Bitmap) {
        var results: [String: Result<TableImage, any Error>] = [:]
        var dropped: [(ImageFormat, UUID)] = []
        func key(_ entity: any ImageEntity, _ format: ImageFormat) -> String { "\(entity.entityID)/\(format.name)" }
        for waiter in waiters.map(\.request) {
            var targets = [waiter.format]
            if provider.shouldProcessAllFormats(inFamily: waiter.format.family, for: waiter.entity) {
                targets += formats(inFamily: waiter.format.family).filter { $0.name != waiter.format.name }
            }
            for format in targets where results[key(waiter.entity, format)] == nil {
                results[key(waiter.entity, format)] = Result { try store(source, entity: waiter.entity, format: format) }
                if source.integrity == .truncated, !format.storesTruncatedImages { dropped.append((format, waiter.entity.entityID)) }
            }
        }
        for waiter in waiters {
            waiter.resume(with: results[key(waiter.request.entity, waiter.request.format)]!)
        }
        // A truncated source's entries reached their waiters (their leases keep the pixels); formats that do
        // not keep such entries drop them now, so the next request loads the source again.
        for (format, entityID) in dropped { tables[format.name]?.delete(entityID: entityID) }
    }

    /// Decodes encoded sources once, just large enough to cover every configured format (aspect fill).
    private func decode(_ source: SourceImage) throws -> Bitmap {
        switch source {
        case .decoded(let bitmap):
            return bitmap
        case .encoded(let data):
            return try decodeTime.time { try decoder.decode(data, covering: formats.values.map(\.size)) }
        }
    }

    private static func typed(_ error: any Error, url: URL) -> TesseraError {
        TesseraError.wrapping(error) { TesseraError(.cache(.sourceUnavailable(url: url.absoluteString, message: "\($0)")), underlying: $0) }
    }
}

extension ImageCache {
    /// How many callers currently wait for `url` (for tests and diagnostics).
    func waiterCount(for url: URL) -> Int {
        loads.waiterCount(for: url)
    }
}
