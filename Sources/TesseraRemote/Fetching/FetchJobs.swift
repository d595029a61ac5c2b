@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The jobs of an ``ImageManager`` and who waits for them: two ``TaskPool``s — one ``ImageJob`` per
/// variant (``ImageKey``), one ``DataJob`` per URL — over the one ``FetchScheduler``.
///
/// A request runs top to bottom: a caller joins its variant's image job or starts one; the image job
/// joins its URL's data job or starts one; the data job asks the scheduler for a slot and gives it
/// back. Results only go up, each job to its own waiters, typed (`Bitmap`, ``FetchedData``). So two
/// sizes of one URL share one download and decode once each, and a hundred callers of one size share
/// both.
///
/// Lanes follow the waiters: a URL's download is urgent while a caller awaits it urgently, directly
/// (``ImageManager/data(for:priority:progress:)``) or through one of its image jobs; prefetches are
/// holds (waiters nobody awaits). Every change of a pool asks the scheduler to refresh that URL's lane,
/// which promotes or demotes the download. When the last waiter of a job leaves, the pool cancels it,
/// and a cancelled image job leaves its data job in turn.
final class FetchJobs: Sendable {
    let pipeline: FetchPipeline
    private let scheduler: FetchScheduler
    private let dataJobs: TaskPool<URL, DataWaiter, FetchedData>
    private let imageJobs: TaskPool<ImageKey, ImageWaiter, Bitmap>
    private let progress = ProgressRelay()
    private let observers = LockedValue<[Observer]>([])
    private let changes: Changes

    private struct Observer {
        let condition: @Sendable (FetchQueueSnapshot) -> Bool
        let continuation: CheckedContinuation<Void, Never>
    }

    /// Carries the changes of the pools and the scheduler, made before this object, to it.
    private final class Changes: Sendable {
        private struct Target { weak var jobs: FetchJobs? }
        private let target = LockedValue(Target())

        func connect(_ jobs: FetchJobs) { target.withLock { $0.jobs = jobs } }
        func changed(_ url: URL?) { target.withLock { $0.jobs }?.changed(url) }
    }

    init(pipeline: FetchPipeline, urgentWidth: Int, scheduling: FetchScheduling) {
        let changes = Changes()
        self.changes = changes
        self.pipeline = pipeline
        scheduler = FetchScheduler(urgentWidth: urgentWidth, scheduling: scheduling, onChange: { changes.changed(nil) })
        dataJobs = TaskPool(onChange: { changes.changed($0) })
        imageJobs = TaskPool(onChange: { changes.changed($0.url) })
        changes.connect(self)
    }

    // MARK: Requests

    /// The variant `key` for a caller: joins its image job or starts one.
    func image(for key: ImageKey, priority: FetchPriority, headers: [String: String],
               progress handler: (@Sendable (LoadProgress) -> Void)?) async throws -> Bitmap {
        let order = scheduler.nextOrder()
        let relayed = progress.add(handler, for: key.url)
        defer { progress.remove(relayed, for: key.url) }
        let outcome = try await imageJobs.value(for: key, request: .caller(priority)) { [self] in
            try await imageJob(key, headers: headers, order: order).run()
        }
        if outcome.joined { pipeline.recorder.coalesced() }
        return outcome.value
    }

    /// The encoded bytes of `url` for a caller (their header checked): joins the URL's data job or starts one.
    func data(for url: URL, priority: FetchPriority, progress handler: (@Sendable (LoadProgress) -> Void)?) async throws -> Data {
        let order = scheduler.nextOrder()
        let relayed = progress.add(handler, for: url)
        defer { progress.remove(relayed, for: url) }
        return try await pipeline.make(from: url, bytes: { [self] again in
            try await bytes(of: url, for: .bytes(priority), headers: [:], order: order, counted: !again)
        }) { [decoder = pipeline.decoder] data in
            _ = try decoder.probe(data)
            return data
        }
    }

    /// Adds a prefetch hold per URL (onto disk, or into memory as `keys[url]` without a disk cache),
    /// starting its job when needed. URLs on disk are skipped unless a job for them is under way.
    func prefetch(_ urls: [URL], keys: [URL: ImageKey], headers: [URL: [String: String]]) {
        let disk = pipeline.disk
        for url in urls where isInProgress(url) || !(disk?.contains(url) ?? false) {
            let order = scheduler.nextOrder(), sent = headers[url] ?? [:]
            if disk != nil {
                dataJobs.hold(url, request: .prefetch) { [self] in try await dataJob(url, headers: sent, order: order).run() }
            } else if let key = keys[url] {
                imageJobs.hold(key, request: .prefetch) { [self] in try await imageJob(key, headers: sent, order: order).run() }
            }
        }
    }

    /// Drops the prefetch holds of `urls`; a job nobody else waits for is cancelled.
    func cancelPrefetch(_ urls: [URL]) {
        let urls = Set(urls)
        dataJobs.cancelWaiters { url, waiter in waiter == .prefetch && urls.contains(url) }
        imageJobs.cancelWaiters { key, waiter in waiter == .prefetch && urls.contains(key.url) }
    }

    /// Moves every urgent caller of `url` to the slow lane.
    func demote(_ url: URL) {
        imageJobs.updateRequests(where: { $0.url == url }) { if case .caller = $0 { $0 = .caller(.prefetch) } }
        dataJobs.updateRequests(where: { $0 == url }) { if case .bytes = $0 { $0 = .bytes(.prefetch) } }
    }

    // MARK: The chain

    private func imageJob(_ key: ImageKey, headers: [String: String], order: Int) -> ImageJob {
        ImageJob(key: key, pipeline: pipeline, bytes: { [self] again in
            try await bytes(of: key.url, for: .image(key), headers: headers, order: order, counted: !again)
        })
    }

    private func dataJob(_ url: URL, headers: [String: String], order: Int) -> DataJob {
        DataJob(url: url, headers: headers, order: order, pipeline: pipeline, scheduler: scheduler, progress: progress,
                lane: { [self] in wantedLane(of: url) })
    }

    /// The bytes of `url` for `waiter`: joins the URL's data job or starts one (`counted`: a join counts
    /// as coalesced).
    private func bytes(of url: URL, for waiter: DataWaiter, headers: [String: String], order: Int,
                       counted: Bool) async throws -> FetchedData {
        let outcome = try await dataJobs.value(for: url, request: waiter) { [self] in
            try await dataJob(url, headers: headers, order: order).run()
        }
        if outcome.joined, counted { pipeline.recorder.coalesced() }
        return outcome.value
    }

    /// Urgent while a caller awaits `url` urgently, directly or through an image job; slow otherwise.
    private func wantedLane(of url: URL) -> FetchPriority {
        for waiter in dataJobs.requests(of: url) {
            switch waiter {
            case .bytes(.urgent): return .urgent
            case .image(let key) where imageJobs.requests(of: key).contains(.caller(.urgent)): return .urgent
            default: continue
            }
        }
        return .prefetch
    }

    private func isInProgress(_ url: URL) -> Bool {
        dataJobs.hasJob(url) || imageJobs.keys.contains { $0.url == url }
    }

    /// A pool changed `url`'s waiters (the lane may change), or the scheduler its lanes (`nil`).
    private func changed(_ url: URL?) {
        if let url { scheduler.refreshLane(of: url) { wantedLane(of: url) } }
        notifyObservers()
    }

    // MARK: Observation

    /// The current lanes and requesters.
    func snapshot() -> FetchQueueSnapshot {
        var snapshot = FetchQueueSnapshot()
        (snapshot.urgentRunning, snapshot.slowRunning, snapshot.urgentQueued, snapshot.slowQueued) = scheduler.lanes()
        var waiters: [URL: Int] = [:], prefetches: [URL: Int] = [:]
        for (url, callers, holds) in dataJobs.contents() {
            snapshot.inProgress.insert(url)
            waiters[url, default: 0] += callers.count { if case .bytes = $0 { true } else { false } }
            prefetches[url, default: 0] += holds.count
        }
        for (key, callers, holds) in imageJobs.contents() {
            snapshot.inProgress.insert(key.url)
            waiters[key.url, default: 0] += callers.count
            prefetches[key.url, default: 0] += holds.count
        }
        snapshot.waiters = waiters.filter { $0.value > 0 }
        snapshot.prefetches = prefetches.filter { $0.value > 0 }
        return snapshot
    }

    /// Returns once `condition` holds for the snapshot (checked now and after every change).
    func waitUntil(_ condition: @escaping @Sendable (FetchQueueSnapshot) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = observers.withLock { observers in
                if condition(snapshot()) { return true }
                observers.append(Observer(condition: condition, continuation: continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// Resumes the observers whose condition holds now. The snapshot is taken under the observers'
    /// lock, so no observer is ever judged on a state older than its own registration.
    private func notifyObservers() {
        let satisfied = observers.withLock { observers -> [CheckedContinuation<Void, Never>] in
            guard !observers.isEmpty else { return [] }
            let current = snapshot()
            var satisfied: [CheckedContinuation<Void, Never>] = []
            observers.removeAll { observer in
                guard observer.condition(current) else { return false }
                satisfied.append(observer.continuation)
                return true
            }
            return satisfied
        }
        for continuation in satisfied { continuation.resume() }
    }
}
