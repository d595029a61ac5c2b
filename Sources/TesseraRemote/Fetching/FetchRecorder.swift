@_spi(Internal) import TesseraImaging
import Foundation

/// The one owner of an ``ImageManager``'s ``FetchStatistics`` and metrics (``RemoteMetrics``): every
/// event of a request is recorded here, by whichever part of the manager sees it, and nowhere else.
final class FetchRecorder: Sendable {
    private let counts = LockedValue(FetchStatistics())
    private let metrics: RemoteMetrics

    init(observability: Observability) {
        metrics = RemoteMetrics(observability: observability)
    }

    /// The counters now.
    var statistics: FetchStatistics { counts.withLock { $0 } }

    /// A request made (an image request, whatever answers it).
    func request() { counts.withLock { $0.requests += 1 } }

    /// A request answered from the memory cache.
    func memoryHit() {
        counts.withLock { $0.memoryHits += 1 }
        metrics.memoryHits.increment()
    }

    /// A request the memory cache did not answer (also one that may not read it).
    func memoryMiss() {
        counts.withLock { $0.memoryMisses += 1 }
        metrics.memoryMisses.increment()
    }

    /// A request past the memory cache that ended: answered from `cacheType`, or failed (`nil`; `cancelled`
    /// for a cancellation).
    func ended(_ cacheType: ImageResponse.CacheType?, cancelled: Bool = false) {
        counts.withLock { counts in
            switch cacheType {
            case .disk: counts.diskResponses += 1
            case .network: counts.networkResponses += 1
            case .local: counts.localResponses += 1
            case .table: counts.tableResponses += 1
            case .memory: break
            case nil: if cancelled { counts.cancelledRequests += 1 } else { counts.failedRequests += 1 }
            }
        }
    }

    /// A job answered from a disk copy.
    func diskHit() {
        counts.withLock { $0.diskHits += 1 }
        metrics.diskHits.increment()
    }

    /// A job that found no usable disk copy.
    func diskMiss() {
        counts.withLock { $0.diskMisses += 1 }
        metrics.diskMisses.increment()
    }

    /// A failed load about to be tried again (``RetryPolicy``).
    func retry() { counts.withLock { $0.retries += 1 } }

    /// A request that joined work already in progress for its URL.
    func coalesced() { counts.withLock { $0.coalesced += 1 } }

    /// A revalidation answered `304 Not Modified`.
    func notModified() { counts.withLock { $0.notModified += 1 } }

    /// A disk copy that did not decode, removed to be fetched again.
    func corruptRefetch() { counts.withLock { $0.corruptRefetches += 1 } }

    /// A data job that ended in an error other than cancellation.
    func failure() { counts.withLock { $0.failures += 1 } }

    /// A load handed to the loader.
    func loadStarted() {
        counts.withLock { $0.downloads += 1 }
        metrics.downloads.increment()
    }

    /// A load that returned a response of `bytes` after starting at `start`.
    func loadFinished(since start: ContinuousClock.Instant, bytes: Int) {
        metrics.downloadTime.recordSince(start)
        metrics.downloadBytes.increment(by: bytes)
    }

    /// A load that failed (cancellation excluded).
    func loadFailed() { metrics.downloadFailures.increment() }

    /// Runs one decode, counted and timed.
    func decode<T>(_ body: () throws -> T) rethrows -> T {
        counts.withLock { $0.decodes += 1 }
        let start = ContinuousClock.now
        defer { metrics.decodeTime.recordSince(start) }
        return try body()
    }
}
