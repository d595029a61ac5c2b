import TesseraImaging
import TesseraTables
import Foundation

/// The bookkeeping of ``ImageManager``: one job per URL shared by every requester (coalescing), the
/// two download lanes, priorities and cancellation. All state lives in this actor; the work itself
/// (disk, network, decoding) runs in a detached task per job (``FetchPipeline/run(url:jobID:coordinator:)``),
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

    struct Job {
        let id: Int
        var waiters: [Int: Waiter] = [:]
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
        var task: Task<Void, Never>?
        let progress = ProgressRelay()

        init(id: Int, order: Int) {
            self.id = id
            self.order = order
        }

        var wantedLane: FetchPriority { waiters.values.contains { $0.priority == .urgent } ? .urgent : .prefetch }
        var isAbandoned: Bool { waiters.isEmpty && holds.isEmpty }
    }

    private let pipeline: FetchPipeline
    private let urgentWidth: Int
    private let scheduling: FetchScheduling
    private var jobs: [URL: Job] = [:]
    private var urgentQueue: [URL] = []
    private var slowQueue: [URL] = []
    private var running: [Int: (url: URL, lane: FetchPriority)] = [:]
    private var nextID = 0
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
                var job = jobs[url] ?? startJob(for: url, headers: headers)
                pipeline.counters.withLock { $0.coalesced += joined ? 1 : 0 }
                if let done = job.delivered[product] { continuation.resume(returning: done); return }
                job.waiters[id] = Waiter(product: product, priority: priority, continuation: continuation)
                job.progress.add(id, progress)
                jobs[url] = job
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
            var job = jobs[url] ?? startJob(for: url, headers: headers(url))
            job.holds[makeID()] = product(url)
            jobs[url] = job
            updateLane(of: url)
        }
    }

    /// Drops the prefetch holds of `urls`; a job nobody else waits for is cancelled.
    func cancelPrefetch(_ urls: [URL]) {
        for url in urls {
            guard var job = jobs[url] else { continue }
            job.holds = [:]
            jobs[url] = job
            abandonIfUnwanted(url)
            updateLane(of: url)
        }
    }

    /// Moves every urgent requester of `url` to the slow lane.
    func demote(_ url: URL) {
        guard var job = jobs[url] else { return }
        for id in job.waiters.keys { job.waiters[id]?.priority = .prefetch }
        jobs[url] = job
        updateLane(of: url)
    }

    /// Cancels one requester: it gets `CancellationError`; the job goes on while anyone else needs it.
    func cancel(requester id: Int, url: URL) {
        guard var job = jobs[url] else { return }
        if let waiter = job.waiters.removeValue(forKey: id) {
            job.progress.remove(id)
            jobs[url] = job
            waiter.continuation.resume(throwing: CancellationError())
        } else if job.holds.removeValue(forKey: id) != nil {
            jobs[url] = job
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
                job.lane = job.wantedLane
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
            jobs[url] = nil
            changed()
            return []
        }
        jobs[url] = job
        return Array(keys)
    }

    /// Resumes every requester of `product` with `result`.
    func deliver(url: URL, jobID: Int, product: FetchProduct, result: Result<FetchOutput, any Error>) {
        guard var job = jobs[url], job.id == jobID else { return }
        if case .success(let output) = result { job.delivered[product] = output }
        var served: [CheckedContinuation<FetchOutput, any Error>] = []
        for (id, waiter) in job.waiters where waiter.product == product {
            served.append(waiter.continuation)
            job.waiters[id] = nil
            job.progress.remove(id)
        }
        for (id, hold) in job.holds where hold == product { job.holds[id] = nil }
        jobs[url] = job
        for continuation in served { continuation.resume(with: result) }
        changed()
    }

    /// The job failed: every requester gets `error`.
    func fail(url: URL, jobID: Int, error: any Error) {
        guard let job = jobs[url], job.id == jobID else { return }
        remove(url)
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
        for (url, job) in jobs {
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

    private func makeID() -> Int {
        nextID += 1
        return nextID
    }

    private func startJob(for url: URL, headers: [String: String] = [:]) -> Job {
        let id = makeID()
        var job = Job(id: id, order: id)
        job.task = Task.detached { [pipeline] in await pipeline.run(url: url, jobID: id, headers: headers, coordinator: self) }
        return job
    }

    /// Puts the job in the queue of its wanted lane, or relabels it while it runs; then schedules.
    private func updateLane(of url: URL) {
        defer { schedule() }
        guard var job = jobs[url] else { return }
        let wanted = job.wantedLane
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

    private func abandonIfUnwanted(_ url: URL) {
        guard let job = jobs[url], job.isAbandoned, job.phase != .delivering else { return }
        remove(url)
    }

    /// Removes the job: out of the queues, its slot wait and its task cancelled.
    private func remove(_ url: URL) {
        guard let job = jobs.removeValue(forKey: url) else { return }
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
