import TesseraImaging
import TesseraTables
import Foundation

/// The state of ``ImageManager``'s download lanes at one moment (for diagnostics, tools and tests).
public struct FetchQueueSnapshot: Sendable, Hashable {
    /// Downloads running on the urgent lane (in `fifo` scheduling: every running download).
    public var urgentRunning: Set<URL> = []
    /// Downloads running on the slow lane (a demoted download counts here while it finishes).
    public var slowRunning: Set<URL> = []
    /// Waiting for the urgent lane, in the order they will start (in `fifo` scheduling: every request).
    public var urgentQueued: [URL] = []
    /// Waiting for the slow lane, in the order they will start.
    public var slowQueued: [URL] = []
    /// Callers awaiting an image, per URL.
    public var waiters: [URL: Int] = [:]
    /// Prefetches not yet done, per URL.
    public var prefetches: [URL: Int] = [:]
    /// URLs with a request in progress (looking up the disk, queued, downloading or decoding).
    public var inProgress: Set<URL> = []

    /// Creates an empty snapshot.
    public init() {}

    /// Whether nothing is in progress.
    public var isIdle: Bool { inProgress.isEmpty }
}
