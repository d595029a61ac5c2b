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
/// Levels follow the waiters: a download wants the highest ``/TesseraTables/FetchPriority`` of the callers
/// awaiting it, directly (``ImageManager/data(for:priority:progress:)``) or through one of its image
/// jobs; prefetches are holds (waiters nobody awaits) at `low`. Every change of a pool, and every change
/// of a caller's level (``ImageTask/priority``), asks the scheduler to refresh that download's level,
/// which promotes, demotes or reorders it. When the last waiter of a job leaves, the pool cancels it,
/// and a cancelled image job leaves its data job in turn.
///
/// Jobs are keyed by the image's identity in the caches (``DataKey``, ``ImageJobKey``): its URL or its
/// cache key, and the cache layers its requesters may use. The URL loaded is the one of the request
/// that started the job.
final class FetchJobs: Sendable {
    let pipeline: FetchPipeline
    private let scheduler: FetchScheduler
    private let dataJobs: TaskPool<DataKey, DataWaiter, FetchedData>
    private let imageJobs: TaskPool<ImageJobKey, ImageWaiter, DecodedImage>
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
        func changed(_ key: DataKey?) { target.withLock { $0.jobs }?.changed(key) }
    }

    /// A prefetch: the variant it would decode without a disk cache, and what to load.
    struct Prefetch: Sendable {
        var key: ImageJobKey
        var source: URL
        var headers: [String: String]
    }

    init(pipeline: FetchPipeline, urgentWidth: Int, scheduling: FetchScheduling) {
        let changes = Changes()
        self.changes = changes
        self.pipeline = pipeline
        scheduler = FetchScheduler(urgentWidth: urgentWidth, scheduling: scheduling, onChange: { changes.changed(nil) })
        dataJobs = TaskPool(onChange: { changes.changed($0) })
        imageJobs = TaskPool(onChange: { changes.changed($0.data) })
        changes.connect(self)
    }

    // MARK: Requests

    /// The variant `key` for a caller: joins its image job or starts one, which loads `source`.
    func image(for key: ImageJobKey, source: URL, caller: CallerPriority, headers: [String: String],
               progress handler: (@Sendable (LoadProgress) -> Void)?) async throws -> DecodedImage {
        let order = scheduler.nextOrder()
        let relayed = progress.add(handler, for: key.data)
        defer { progress.remove(relayed, for: key.data) }
        let outcome = try await imageJobs.value(for: key, request: .caller(caller)) { [self] in
            try await imageJob(key, source: source, headers: headers, order: order).run()
        }
        if outcome.joined { pipeline.recorder.coalesced() }
        return outcome.value
    }

    /// The encoded bytes of `key` for a caller (their header checked): joins its data job or starts one,
    /// which loads `source` with `headers`.
    func data(for key: DataKey, source: URL, caller: CallerPriority, headers: [String: String] = [:],
              progress handler: (@Sendable (LoadProgress) -> Void)?) async throws -> FetchedData {
        let order = scheduler.nextOrder()
        let relayed = progress.add(handler, for: key)
        defer { progress.remove(relayed, for: key) }
        return try await pipeline.make(from: key.url, bytes: { [self] again in
            try await bytes(of: key, source: source, for: .bytes(caller), headers: headers, order: order, counted: !again)
        }) { [decoder = pipeline.decoder] fetched in
            _ = try decoder.probe(fetched.data)
            return fetched
        }
    }

    /// Adds a prefetch hold per item (onto disk, or into memory as its variant without a disk cache),
    /// starting its job when needed. Items on disk are skipped unless a job for them is under way.
    func prefetch(_ items: [Prefetch]) {
        let disk = pipeline.disk
        for item in items where isInProgress(item.key.data.url) || !(disk?.contains(item.key.data.url) ?? false) {
            let order = scheduler.nextOrder()
            if disk != nil {
                dataJobs.hold(item.key.data, request: .prefetch) { [self] in
                    try await dataJob(item.key.data, source: item.source, headers: item.headers, order: order).run()
                }
            } else {
                imageJobs.hold(item.key, request: .prefetch) { [self] in
                    try await imageJob(item.key, source: item.source, headers: item.headers, order: order).run()
                }
            }
        }
    }

    /// Drops the prefetch holds of the images whose identities are `urls`; a job nobody else waits for
    /// is cancelled.
    func cancelPrefetch(_ urls: [URL]) {
        let urls = Set(urls)
        dataJobs.cancelWaiters { key, waiter in waiter.isPrefetch && urls.contains(key.url) }
        imageJobs.cancelWaiters { key, waiter in
            if case .prefetch = waiter { return urls.contains(key.data.url) }
            return false
        }
    }

    /// Moves every caller of the image whose identity is `url` that is on the urgent lane to
    /// ``/TesseraTables/FetchPriority/low``.
    func demote(_ url: URL) {
        func lower(_ caller: CallerPriority) { if caller.value.isUrgent { caller.set(.low) } }
        imageJobs.updateRequests(where: { $0.data.url == url }) { if case .caller(let caller) = $0 { lower(caller) } }
        dataJobs.updateRequests(where: { $0.url == url }) { if case .bytes(let caller) = $0 { lower(caller) } }
    }

    /// A caller of the image whose identity is `url` changed its level: its downloads take their places.
    func priorityChanged(of url: URL) {
        for key in dataJobs.keys where key.url == url { changed(key) }
    }

    // MARK: The chain

    private func imageJob(_ key: ImageJobKey, source: URL, headers: [String: String], order: Int) -> ImageJob {
        ImageJob(key: key, pipeline: pipeline, bytes: { [self] again in
            try await bytes(of: key.data, source: source, for: .image(key), headers: headers, order: order, counted: !again)
        })
    }

    private func dataJob(_ key: DataKey, source: URL, headers: [String: String], order: Int) -> DataJob {
        DataJob(key: key, source: source, headers: headers, order: order, pipeline: pipeline, scheduler: scheduler,
                progress: progress, priority: { [self] in wantedPriority(of: key) })
    }

    /// The bytes of `key` for `waiter`: joins its data job or starts one (`counted`: a join counts as
    /// coalesced).
    private func bytes(of key: DataKey, source: URL, for waiter: DataWaiter, headers: [String: String], order: Int,
                       counted: Bool) async throws -> FetchedData {
        let outcome = try await dataJobs.value(for: key, request: waiter) { [self] in
            try await dataJob(key, source: source, headers: headers, order: order).run()
        }
        if outcome.joined, counted { pipeline.recorder.coalesced() }
        return outcome.value
    }

    /// The highest level among the waiters of `key`, directly or through its image jobs.
    private func wantedPriority(of key: DataKey) -> FetchPriority {
        var wanted = FetchPriority.veryLow
        for waiter in dataJobs.requests(of: key) {
            switch waiter {
            case .bytes(let caller): wanted = max(wanted, caller.value)
            case .image(let image): for request in imageJobs.requests(of: image) { wanted = max(wanted, request.priority) }
            case .prefetch: wanted = max(wanted, .low)
            }
        }
        return wanted
    }

    private func isInProgress(_ url: URL) -> Bool {
        dataJobs.keys.contains { $0.url == url } || imageJobs.keys.contains { $0.data.url == url }
    }

    /// A pool changed the waiters of `key` (its level may change), or the scheduler its lanes (`nil`).
    private func changed(_ key: DataKey?) {
        if let key { scheduler.refreshLane(of: key) { wantedPriority(of: key) } }
        notifyObservers()
    }

    // MARK: Observation

    /// The current lanes and requesters.
    func snapshot() -> FetchQueueSnapshot {
        var snapshot = FetchQueueSnapshot()
        (snapshot.urgentRunning, snapshot.slowRunning, snapshot.urgentQueued, snapshot.slowQueued) = scheduler.lanes()
        var waiters: [URL: Int] = [:], prefetches: [URL: Int] = [:]
        for (key, callers, holds) in dataJobs.contents() {
            snapshot.inProgress.insert(key.url)
            waiters[key.url, default: 0] += callers.count { if case .bytes = $0 { true } else { false } }
            prefetches[key.url, default: 0] += holds.count
        }
        for (key, callers, holds) in imageJobs.contents() {
            snapshot.inProgress.insert(key.data.url)
            waiters[key.data.url, default: 0] += callers.count
            prefetches[key.data.url, default: 0] += holds.count
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
