@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The bottom of a remote request's chain: the job of one image's bytes. A `file:` or `data:` URL is read
/// at once (``LocalDataLoader``). Otherwise it reads the disk copy (fresh → used; any copy when offline)
/// unless its requests skip disk reads; a stale copy it may answer at once, marked for revalidation
/// (``StaleUse``), else asks the ``FetchScheduler`` for a slot, downloads or
/// revalidates (`304` refreshes the copy), gives the slot back, and writes what it may to disk (unless its
/// requests skip disk writes); when the origin fails, a stale copy within `stale-if-error` is the answer. Its result goes up, through ``FetchJobs``' pool, to whoever waits for it
/// (image jobs, ``ImageManager/data(for:priority:progress:)`` callers, prefetches); it knows nothing of
/// them but the level they want.
struct DataJob: Sendable {
    /// The job's identity: the image's identity in the caches and the disk layers it may use.
    let key: DataKey
    /// The URL loaded (that of the request that started the job; the identity may be a cache key).
    let source: URL
    /// The headers of the request that started the job.
    let headers: [String: String]
    /// The job's place in the request order (``FetchScheduler/nextOrder()``).
    let order: Int
    let pipeline: FetchPipeline
    let scheduler: FetchScheduler
    let progress: ProgressRelay
    /// The level the job's waiters want now.
    let priority: @Sendable () -> FetchPriority

    /// The bytes of ``source``.
    func run() async throws -> FetchedData {
        do {
            return try await obtain()
        } catch {
            if !(error is CancellationError) { pipeline.recorder.failure() }
            throw error
        }
    }

    /// A local URL's bytes; else a fresh disk copy (any copy when offline), a stale one the job may answer
    /// at once (``StaleUse``; marked for revalidation), else a download or revalidation — and when that
    /// fails at the origin, a stale copy within its `stale-if-error` window.
    private func obtain() async throws -> FetchedData {
        if LocalDataLoader.handles(source) {
            let response = try LocalDataLoader().load(pipeline.loadRequest(url: source, headers: headers))
            progress.report(LoadProgress(receivedBytes: response.data.count, expectedBytes: response.data.count), for: key)
            return FetchedData(data: response.data, cacheType: .local)
        }
        let offline = pipeline.settings.offline
        var cached: DiskCacheEntry?
        if key.readsDisk, let disk = pipeline.disk, disk.contains(key.url) { cached = await disk.entry(for: key.url) }
        if let cached, key.stale != .revalidating {
            let now = pipeline.now()
            if offline || cached.info.isFresh(at: now) {
                pipeline.recorder.diskHit()
                return answer(cached)
            }
            if key.stale == .always || cached.info.isUsableWhileRevalidating(at: now) {
                pipeline.recorder.diskHit()
                pipeline.logger.debug("stale disk copy answered; revalidating in the background", metadata: ["url": "\(source.absoluteString)"])
                var fetched = answer(cached)
                fetched.needsRevalidation = true
                return fetched
            }
        }
        if key.readsDisk, pipeline.disk != nil, key.stale != .revalidating { pipeline.recorder.diskMiss() }
        if offline { throw TesseraError(.fetching(.offlineMiss(url: source.absoluteString))) }
        do {
            return try await download(revalidating: cached)
        } catch {
            guard key.stale != .revalidating, let cached, cached.info.isUsableIfError(at: pipeline.now()),
                  Self.isOriginFailure(error) else { throw error }
            pipeline.logger.info("origin failed; stale disk copy answered (stale-if-error)", metadata: [
                "url": "\(source.absoluteString)", "error": "\(error)",
            ])
            return answer(cached)
        }
    }

    /// The disk copy `cached` as the job's answer.
    private func answer(_ cached: DiskCacheEntry) -> FetchedData {
        FetchedData(data: cached.data, cacheType: .disk, etag: cached.info.etag, lastModified: cached.info.lastModified)
    }

    /// Whether `error` is one that `stale-if-error` covers (RFC 5861 §4): the origin could not be reached
    /// or did not answer in time, or answered with a 5xx; a loader's own error counts as a transport failure.
    /// Not a cancellation, nor an answer such as `404` that says the image is gone.
    static func isOriginFailure(_ error: any Error) -> Bool {
        if error is CancellationError { return false }
        guard let error = error as? TesseraError else { return true }
        switch error.reason {
        case .fetching(.httpStatus(let code, _)): return code >= 500
        case .fetching(.timeout), .fetching(.connectionRefused), .fetching(.transport): return true
        default: return false
        }
    }

    /// Waits for a slot, loads (conditionally when `cached` has validators), gives the slot back, and
    /// updates the disk.
    private func download(revalidating cached: DiskCacheEntry?) async throws -> FetchedData {
        let configuration = pipeline.settings
        var request = pipeline.loadRequest(url: source, headers: headers)
        if let cached, cached.info.canRevalidate { request = cached.info.conditionalRequest(request) }
        let slot = try await scheduler.slot(for: key, order: order, priority: priority)
        let response: LoadResponse
        do {
            response = try await pipeline.load(request, progress: { [progress, key] in progress.report($0, for: key) })
        } catch {
            scheduler.release(slot)
            throw error
        }
        scheduler.release(slot)
        try Task.checkCancellation()
        var answer = response
        answer.data = Data()
        if response.isNotModified {
            guard let cached, request.isConditional else {
                throw TesseraError(.fetching(.httpStatus(code: 304, url: source.absoluteString)))
            }
            pipeline.recorder.notModified()
            pipeline.logger.debug("revalidated: 304 Not Modified", metadata: ["url": "\(source.absoluteString)"])
            let info = cached.info.refreshed(by: response, now: pipeline.now(), defaultMaxAge: configuration.defaultMaxAge)
            if key.writesDisk { try? await pipeline.disk?.store(cached.data, info: info, for: key.url) }
            return FetchedData(data: cached.data, cacheType: .disk, response: answer, etag: info.etag, lastModified: info.lastModified)
        }
        // Only what looks like an image is kept on disk (an HTML error page served as 200 is not).
        if key.writesDisk, let disk = pipeline.disk, HTTPCacheInfo.isStorable(response),
           (try? pipeline.decoder.probe(response.data)) != nil {
            let info = HTTPCacheInfo(response: response, requestedURL: key.url, now: pipeline.now(),
                                     defaultMaxAge: configuration.defaultMaxAge)
            try? await disk.store(response.data, info: info, for: key.url)
        }
        // A background revalidation answered with the bytes it had: unchanged, as a 304 would say.
        if key.stale == .revalidating, let cached, cached.data == response.data {
            return FetchedData(data: cached.data, cacheType: .disk, response: answer, etag: response.headers["etag"],
                               lastModified: response.headers["last-modified"])
        }
        return FetchedData(data: response.data, cacheType: .network, response: answer, etag: response.headers["etag"],
                           lastModified: response.headers["last-modified"])
    }
}
