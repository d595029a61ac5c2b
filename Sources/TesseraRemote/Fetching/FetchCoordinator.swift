@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The bookkeeping of ``ImageManager``: one job per URL shared by every requester (coalescing), the
/// two download lanes, priorities and cancellation. All state lives in this actor; the work itself
/// (disk, network, decoding) runs in a detached task per job (``FetchPipeline/run(url:jobID:headers:coordinator:)``),
/// which calls back here at each step and finds out that way whether it was abandoned.
///
/// Lane rules (``FetchScheduling/prioritized``):
/// - A job's lane is urgent while at least one awaiting requester is urgent, slow otherwise.
/// - Up to `urgentWidth` urgent downloads run at once, first come first served.
/// - One slow download runs at a time, and one starts only when no urgent download runs or waits:
///   the slow lane *pauses* (starts nothing new) while urgent work exists. A slow download that is
///   already running is left to finish — cutting it off would waste the bytes already received.
/// - Promotion: an urgent requester joining a job queued on the slow lane moves it to the back of the
///   urgent queue; joining a running slow download relabels it urgent (no second download).
/// - Demotion: the job goes to the *front* of the slow queue (it was wanted most recently, so it is
///   the prefetch most likely to be needed next); a running download is relabelled slow and finishes.
actor FetchCoordinator {
    struct Waiter {
        var product: FetchProduct
        var priority: FetchPriority
        var continuation: CheckedContinuation<FetchOutput, any Error>
    }

    enum Phase { case preparing, queued, running, delivering }

    /// What a job holds besides its waiters (which ``CoalescingJobs`` keeps).
    struct JobState {
        /// Prefetch requesters; the product is what to decode into memory (`nil`: bytes on disk suffice).
        var holds: [Int: FetchProduct?] = [:]
        var delivered: [FetchProduct: FetchOutput] = [:]
        var phase = Phase.preparing
        var lane = FetchPriority.prefetch
        /// Position in its queue: the request order, renewed on promotion, negative after a demotion
        /// (front of the slow queue). Jobs reach ``acquireSlot(url:jobID:)`` in any order after their disk
        /// lookups; sorting by this keeps the queues in request order.
        var order: Int
        var slot: CheckedContinuation<ProgressRelay, any Error>?
        let progress = ProgressRelay()

        init(order: Int) {
            self.order = order
        }
    }

    typealias Job = CoalescingJobs<URL, Waiter, JobState>.Job

    private let pipeline: FetchPipeline
    private let urgentWidth: Int
    private let scheduling: FetchScheduling
    private var jobs = CoalescingJobs<URL, Waiter, JobState>()
    private var urgentQueue: [URL] = []
    private var slowQueue: [URL] = []
    private var running: [Int: (url: URL, lane: FetchPriority)] = [:]
    private var frontOrder = 0
    private var observers: [(condition: @Sendable (FetchQueueSnapshot) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []

    init(pipeline: FetchPipeline, urgentWidth: Int, scheduling: FetchScheduling) {
        self.pipeline = pipeline
        self.urgentWidth = max(1, urgentWidth)
        self.scheduling = scheduling
    }

    // MARK: Requests

    /// Waits for `product` of `url`, joining the job of the URL or starting one.
    func request(_ url: URL, product: FetchProduct, priority: FetchPriority, headers: [String: String] = [:],
                 progress: (@Sendable (LoadProgress) -> Void)?) async throws -> FetchOutput {
        let id = makeID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<FetchOutput, any Error>) in
                if Task.isCancelled { continuation.resume(throwing: CancellationError()); return }
                let joined = jobs[url] != nil
                if !joined { startJob(for: url, headers: headers) }
                pipeline.counters.withLock { $0.coalesced += joined ? 1 : 0 }
                if let done = jobs[url]!.delivered[product] { continuation.resume(returning: done); return }
                jobs.addWaiter(Waiter(product: product, priority: priority, continuation: continuation), id: id, to: url)
                jobs[url]!.progress.add(id, progress)
                updateLane(of: url)
            }
        } onCancel: {
            Task { await self.cancel(requester: id, url: url) }
        }
    }

    /// Registers prefetches: each URL gets a hold on its job (started when needed), and the job runs on
    /// the slow lane unless someone awaits it urgently. URLs that `skip` says are cached are left alone.
    func prefetch(_ urls: [URL], product: (URL) -> FetchProduct?, skip: (URL) -> Bool,
                  headers: (URL) -> [String: String] = { _ in [:] }) {
        for url in urls where jobs[url] != nil || !skip(url) {
            if jobs[url] == nil { startJob(for: url, headers: headers(url)) }
            let hold = makeID()
            jobs[url]!.holds[hold] = product(url)
            updateLane(of: url)
        }
    }

    /// Drops the prefetch holds of `urls`; a job nobody else waits for is cancelled.
    func cancelPrefetch(_ urls: [URL]) {
        for url in urls {
            guard jobs[url] != nil else { continue }
            jobs[url]!.holds = [:]
            abandonIfUnwanted(url)
            updateLane(of: url)
        }
    }

    /// Moves every urgent requester of `url` to the slow lane.
    func demote(_ url: URL) {
        jobs.updateWaiters(of: url) { $0.priority = .prefetch }
        updateLane(of: url)
    }

    /// Cancels one requester: it gets `CancellationError`; the job goes on while anyone else needs it.
    func cancel(requester id: Int, url: URL) {
        guard let job = jobs[url] else { return }
        if let (_, waiter) = jobs.removeWaiter(id) {
            job.progress.remove(id)
            waiter.continuation.resume(throwing: CancellationError())
        } else if job.holds[id] != nil {
            jobs[url]!.holds[id] = nil
        } else {
            return
        }
        abandonIfUnwanted(url)
        updateLane(of: url)
    }

    // MARK: Called by the job's task

    /// Waits until the lane rules let the job download; returns the job's progress relay.
    func acquireSlot(url: URL, jobID: Int) async throws -> ProgressRelay {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ProgressRelay, any Error>) in
                guard var job = jobs[url], job.id == jobID, !Task.isCancelled else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                job.phase = .queued
                job.lane = Self.wantedLane(of: job)
                job.slot = continuation
                jobs[url] = job
                enqueue(url, lane: job.lane)
                schedule()
            }
        } onCancel: {
            Task { await self.abandonSlot(url: url, jobID: jobID) }
        }
    }

    /// The download ended (successfully or not): frees its lane slot.
    func releaseSlot(url: URL, jobID: Int) {
        running[jobID] = nil
        if var job = jobs[url], job.id == jobID {
            job.phase = .delivering
            jobs[url] = job
        }
        schedule()
    }

    /// The products still to make: those of awaiting requesters and memory-warming prefetches. When there
    /// are none the job is finished and removed (returns `[]`); `nil` when the job is no longer this one.
    func pendingProducts(url: URL, jobID: Int) -> [FetchProduct]? {
        guard var job = jobs[url], job.id == jobID else { return nil }
        job.phase = .delivering
        var keys = Set(job.waiters.values.map(\.product))
        for case let key? in job.holds.values { keys.insert(key) }
        if keys.isEmpty {
            _ = jobs.removeJob(url, jobID: jobID)
            changed()
            return []
        }
        jobs[url] = job
        return Array(keys)
    }

    /// Resumes every requester of `product` with `result`.
    func deliver(url: URL, jobID: Int, product: FetchProduct, result: Result<FetchOutput, any Error>) {
        guard jobs.isCurrent(url, jobID: jobID) else { return }
        if case .success(let output) = result { jobs[url]!.delivered[product] = output }
        let served = jobs.takeWaiters(of: url, jobID: jobID, where: { $0.product == product })
        var job = jobs[url]!
        for (id, _) in served { job.progress.remove(id) }
        for (id, hold) in job.holds where hold == product { job.holds[id] = nil }
        jobs[url] = job
        for (_, waiter) in served { waiter.continuation.resume(with: result) }
        changed()
    }

    /// The job failed: every requester gets `error`.
    func fail(url: URL, jobID: Int, error: any Error) {
        guard jobs.isCurrent(url, jobID: jobID), let job = remove(url) else { return }
        for waiter in job.waiters.values { waiter.continuation.resume(throwing: error) }
        changed()
    }

    // MARK: Observation

    /// The current lanes and requesters.
    func snapshot() -> FetchQueueSnapshot {
        var snapshot = FetchQueueSnapshot()
        for (_, entry) in running {
            if entry.lane == .urgent { snapshot.urgentRunning.insert(entry.url) } else { snapshot.slowRunning.insert(entry.url) }
        }
        snapshot.urgentQueued = urgentQueue
        snapshot.slowQueued = slowQueue
        for (url, job) in jobs.all {
            snapshot.inProgress.insert(url)
            if !job.waiters.isEmpty { snapshot.waiters[url] = job.waiters.count }
            if !job.holds.isEmpty { snapshot.prefetches[url] = job.holds.count }
        }
        return snapshot
    }

    /// Returns once `condition` holds for the snapshot (checked now and after every change).
    func waitUntil(_ condition: @escaping @Sendable (FetchQueueSnapshot) -> Bool) async {
        if condition(snapshot()) { return }
        await withCheckedContinuation { observers.append((condition, $0)) }
    }

    // MARK: Internals

    private func makeID() -> Int { jobs.makeID() }

    /// Starts the job of `url`, ordered by its id (request order).
    private func startJob(for url: URL, headers: [String: String]) {
        let id = jobs.startJob(for: url, extra: JobState(order: 0))
        jobs[url]!.order = id
        jobs[url]!.task = Task.detached { [pipeline] in await pipeline.run(url: url, jobID: id, headers: headers, coordinator: self) }
    }

    /// Urgent while at least one awaiting requester is urgent, slow otherwise.
    private static func wantedLane(of job: Job) -> FetchPriority {
        job.waiters.values.contains { $0.priority == .urgent } ? .urgent : .prefetch
    }

    /// Puts the job in the queue of its wanted lane, or relabels it while it runs; then schedules.
    private func updateLane(of url: URL) {
        defer { schedule() }
        guard var job = jobs[url] else { return }
        let wanted = Self.wantedLane(of: job)
        guard wanted != job.lane else { return }
        let previous = job.lane
        job.lane = wanted
        if scheduling == .prioritized {
            if wanted == .urgent {
                job.order = makeID()
            } else {
                frontOrder -= 1
                job.order = frontOrder
            }
        }
        jobs[url] = job
        switch job.phase {
        case .queued:
            guard scheduling == .prioritized else { return }
            dequeue(url, lane: previous)
            enqueue(url, lane: wanted)
        case .running:
            running[job.id]?.lane = wanted
        case .preparing, .delivering:
            break
        }
    }

    /// Inserts `url` into its lane's queue by ``Job/order``.
    private func enqueue(_ url: URL, lane: FetchPriority) {
        let order = jobs[url]?.order ?? Int.max
        func insert(into queue: inout [URL]) {
            var index = queue.count
            while index > 0, (jobs[queue[index - 1]]?.order ?? Int.min) > order { index -= 1 }
            queue.insert(url, at: index)
        }
        if scheduling == .fifo || lane == .urgent { insert(into: &urgentQueue) } else { insert(into: &slowQueue) }
    }

    private func dequeue(_ url: URL, lane: FetchPriority) {
        if scheduling == .fifo || lane == .urgent { urgentQueue.removeAll { $0 == url } } else { slowQueue.removeAll { $0 == url } }
    }

    /// Starts what the lane rules allow.
    private func schedule() {
        func count(_ lane: FetchPriority) -> Int { running.values.filter { $0.lane == lane }.count }
        if scheduling == .fifo {
            while running.count < urgentWidth, !urgentQueue.isEmpty { start(urgentQueue.removeFirst()) }
        } else {
            while count(.urgent) < urgentWidth, !urgentQueue.isEmpty { start(urgentQueue.removeFirst()) }
            if count(.urgent) == 0, urgentQueue.isEmpty, count(.prefetch) == 0, !slowQueue.isEmpty {
                start(slowQueue.removeFirst())
            }
        }
        changed()
    }

    private func start(_ url: URL) {
        guard var job = jobs[url], let slot = job.slot else { return }
        job.slot = nil
        job.phase = .running
        jobs[url] = job
        running[job.id] = (url, job.lane)
        slot.resume(returning: job.progress)
    }

    /// Removes the job when no waiter and no prefetch needs it any more, unless it is delivering.
    private func abandonIfUnwanted(_ url: URL) {
        if let job = jobs.abandonIfUnwanted(url, stillWanted: { !$0.holds.isEmpty || $0.phase == .delivering }) {
            discard(job, url: url)
        }
    }

    /// Removes the job: out of the queues, its slot wait and its task cancelled. Returns it (with the
    /// waiters it still had).
    @discardableResult
    private func remove(_ url: URL) -> Job? {
        guard let job = jobs.removeJob(url) else { return nil }
        discard(job, url: url)
        return job
    }

    private func discard(_ job: Job, url: URL) {
        urgentQueue.removeAll { $0 == url }
        slowQueue.removeAll { $0 == url }
        job.slot?.resume(throwing: CancellationError())
        job.task?.cancel()
        schedule()
    }

    private func abandonSlot(url: URL, jobID: Int) {
        guard let job = jobs[url], job.id == jobID, job.phase == .queued else { return }
        remove(url)
    }

    private func changed() {
        guard !observers.isEmpty else { return }
        let current = snapshot()
        var waiting: [(condition: @Sendable (FetchQueueSnapshot) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
        for observer in observers {
            if observer.condition(current) { observer.continuation.resume() } else { waiting.append(observer) }
        }
        observers = waiting
    }
}
