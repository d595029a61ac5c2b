@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The bottom of a remote request's chain: the job of one URL's bytes. It reads the disk copy (fresh →
/// used; any copy when offline), otherwise asks the ``FetchScheduler`` for a slot, downloads or
/// revalidates (`304` refreshes the copy), gives the slot back, and writes what it may to disk. Its
/// result goes up, through ``FetchJobs``' pool, to whoever waits for the URL (image jobs,
/// ``ImageManager/data(for:priority:progress:)`` callers, prefetches); it knows nothing of them but the
/// lane they want.
struct DataJob: Sendable {
    let url: URL
    /// The headers of the request that started the job.
    let headers: [String: String]
    /// The job's place in the request order (``FetchScheduler/nextOrder()``).
    let order: Int
    let pipeline: FetchPipeline
    let scheduler: FetchScheduler
    let progress: ProgressRelay
    /// The lane the job's waiters want now.
    let lane: @Sendable () -> FetchPriority

    /// The bytes of ``url``.
    func run() async throws -> FetchedData {
        do {
            return try await obtain()
        } catch {
            if !(error is CancellationError) { pipeline.recorder.failure() }
            throw error
        }
    }

    /// A fresh disk copy (any copy when offline), else a download or revalidation.
    private func obtain() async throws -> FetchedData {
        let offline = pipeline.settings.offline
        var cached: DiskCacheEntry?
        if let disk = pipeline.disk, disk.contains(url) { cached = await disk.entry(for: url) }
        if let cached, offline || cached.info.isFresh(at: pipeline.now()) {
            pipeline.recorder.diskHit()
            return FetchedData(data: cached.data, fromDisk: true)
        }
        if pipeline.disk != nil { pipeline.recorder.diskMiss() }
        if offline { throw TesseraError(.fetching(.offlineMiss(url: url.absoluteString))) }
        return try await download(revalidating: cached)
    }

    /// Waits for a slot, loads (conditionally when `cached` has validators), gives the slot back, and
    /// updates the disk.
    private func download(revalidating cached: DiskCacheEntry?) async throws -> FetchedData {
        let configuration = pipeline.settings
        var request = pipeline.loadRequest(url: url, headers: headers)
        if let cached, cached.info.canRevalidate { request = cached.info.conditionalRequest(request) }
        let slot = try await scheduler.slot(for: url, order: order, lane: lane)
        let response: LoadResponse
        do {
            response = try await pipeline.load(request, progress: { [progress, url] in progress.report($0, for: url) })
        } catch {
            scheduler.release(slot)
            throw error
        }
        scheduler.release(slot)
        try Task.checkCancellation()
        if response.isNotModified {
            guard let cached, request.isConditional else {
                throw TesseraError(.fetching(.httpStatus(code: 304, url: url.absoluteString)))
            }
            pipeline.recorder.notModified()
            pipeline.logger.debug("revalidated: 304 Not Modified", metadata: ["url": "\(url.absoluteString)"])
            let info = cached.info.refreshed(by: response, now: pipeline.now(), defaultMaxAge: configuration.defaultMaxAge)
            try? await pipeline.disk?.store(cached.data, info: info, for: url)
            return FetchedData(data: cached.data, fromDisk: true)
        }
        // Only what looks like an image is kept on disk (an HTML error page served as 200 is not).
        if let disk = pipeline.disk, HTTPCacheInfo.isStorable(response), (try? pipeline.decoder.probe(response.data)) != nil {
            let info = HTTPCacheInfo(response: response, requestedURL: url, now: pipeline.now(), defaultMaxAge: configuration.defaultMaxAge)
            try? await disk.store(response.data, info: info, for: url)
        }
        return FetchedData(data: response.data, fromDisk: false)
    }
}
