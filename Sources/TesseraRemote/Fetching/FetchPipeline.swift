@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The work of one ``ImageManager`` job, run in a detached task (never on a caller's actor): disk
/// lookup, download or revalidation on a lane slot, disk store, decoding per requested variant,
/// memory insert. ``FetchCoordinator`` holds the state; this type holds the parts.
final class FetchPipeline: Sendable {
    let loader: any DataLoading
    let memory: (any MemoryCaching)?
    let disk: (any DiskCaching)?
    let decoder: ImageDecoder
    let settings: ImageManager.Configuration
    let counters = LockedValue(FetchStatistics())
    /// Bounds the decodes of all jobs together (``ImageManager/Configuration/maximumConcurrentDecodes``).
    let decodes: ParallelismLimit
    let now: @Sendable () -> Date

    init(loader: any DataLoading, memory: (any MemoryCaching)?, disk: (any DiskCaching)?, decoder: ImageDecoder,
         configuration: ImageManager.Configuration, now: @escaping @Sendable () -> Date) {
        self.loader = loader
        self.memory = memory
        self.disk = disk
        self.decoder = decoder
        self.settings = configuration
        self.now = now
        decodes = ParallelismLimit(width: configuration.maximumConcurrentDecodes)
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
                    if case .failure = result, source.fromDisk {
                        // The cached copy is corrupt: drop it and fetch the bytes again, once.
                        counters.withLock { $0.corruptRefetches += 1 }
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
            counters.withLock { $0.diskHits += 1 }
            return Source(data: cached.data, fromDisk: true)
        }
        if offline { throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString))) }
        return try await download(url: url, jobID: jobID, headers: headers, coordinator: coordinator, revalidating: cached)
    }

    /// Waits for a lane slot, loads (conditionally when `cached` has validators), and updates the disk.
    private func download(url: URL, jobID: Int, headers: [String: String], coordinator: FetchCoordinator,
                          revalidating cached: DiskCacheEntry?) async throws -> Source {
        let configuration = settings
        var request = LoadRequest(url: url, timeout: configuration.requestTimeout, maximumBytes: configuration.maximumResponseBytes,
                                  headers: headers)
        if let cached, cached.info.canRevalidate { request = cached.info.conditionalRequest(request) }
        let relay = try await coordinator.acquireSlot(url: url, jobID: jobID)
        let response: LoadResponse
        do {
            counters.withLock { $0.downloads += 1 }
            response = try await loader.load(request, progress: { relay.report($0) })
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

    /// The `key` variant of `url` from memory or any disk copy, fresh or stale, without the network
    /// (``ImageRequest/CachePolicy/cacheOnly``).
    func cachedCopy(url: URL, key: ImageKey) async throws -> Bitmap {
        guard let disk, let entry = await disk.entry(for: url) else {
            throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString)))
        }
        counters.withLock { $0.diskHits += 1 }
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

    /// Decodes `data` into the variant `key` asks for (see ``ImageKey/mode``).
    func decode(_ data: Data, for key: ImageKey) throws -> Bitmap {
        counters.withLock { $0.decodes += 1 }
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
