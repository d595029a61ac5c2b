/// The one keyed task pool in Tessera: at most one job per key, any number of callers waiting for it,
/// and the job cancelled when the last of them leaves. Its users say only what a job runs (the layers
/// above name them in docs/ARCHITECTURE.md); starting, joining, per-caller cancellation and deadlines,
/// and abandoning are written here once, over the ``CoalescingJobs`` bookkeeping.
///
/// - **Joining.** A caller whose key has a job waits for that job (``Outcome/joined``); otherwise its
///   work starts the job, in a detached task (never on the caller's actor).
/// - **Leaving.** A caller leaves when its task is cancelled (`CancellationError`), at its deadline
///   (``DeadlineExceeded``) or through ``cancelWaiters(where:)``; its answer never waits for the work.
/// - **Holds.** A hold (``hold(_:request:run:)``) is a waiter nobody awaits, a prefetch say: it keeps
///   the job wanted and is dropped when the job ends.
/// - **Abandoning.** When the last caller and hold have left a job that is not committed
///   (``Job/commit()``), its task is cancelled and `onAbandon` hears its key; ``Abandoning`` says
///   whether the job leaves the pool at once or when its task ends.
/// - **Delivering.** A job ends with one result for every caller still waiting
///   (``Job/finish(with:)``), or serves its callers one batch at a time with a result each
///   (``Job/takeWaitersOrEnd()``).
///
/// `onChange` hears a key after every change of its job or its waiters (outside the pool's lock).
package final class TaskPool<Key: Hashable & Sendable, Request: Sendable, Value: Sendable>: Sendable {
    /// What becomes of a job whose last waiter left.
    package enum Abandoning: Sendable {
        /// It leaves the pool at once and its task is cancelled: the next caller starts the work anew.
        case remove
        /// Its task is cancelled, but it stays in the pool until the task ends, so that a caller
        /// arriving meanwhile joins it rather than starting the same work twice. Work that cannot be
        /// interrupted finishes and serves that caller; if the job ends in an error instead, the caller
        /// starts the work again.
        case keepUntilEnd
    }

    /// Thrown to a caller whose deadline passed before its job's result.
    package struct DeadlineExceeded: Error, Sendable {}

    /// A caller's result, and whether it joined a job that was already there.
    package struct Outcome: Sendable {
        /// The job's result for this caller.
        package var value: Value
        /// Whether another caller had started the job.
        package var joined: Bool
    }

    /// A caller taken from its job by ``Job/takeWaitersOrEnd()``, to be given its own result.
    package struct Waiter: Sendable {
        /// What the caller asked for.
        package let request: Request
        fileprivate let continuation: CheckedContinuation<Value, any Error>

        /// Gives the caller its result (exactly once).
        package func resume(with result: Result<Value, any Error>) { continuation.resume(with: result) }
    }

    /// The running job's view of the pool: what its callers want, and how it answers them. Every method
    /// does nothing once the job has ended or was abandoned and removed.
    package struct Job: Sendable {
        /// The job's key.
        package let key: Key
        fileprivate let id: Int
        fileprivate let pool: TaskPool

        /// What the callers waiting now ask for, in arrival order (holds not included).
        package var requests: [Request] { pool.requests(of: key, jobID: id) }

        /// From now on the job is never abandoned: callers may still leave, and late callers join it.
        package func commit() { pool.commit(key, jobID: id) }

        /// Takes the callers waiting now, in arrival order, for the job to answer each one; when none
        /// waits, ends the job instead (holds are dropped) and returns nothing.
        package func takeWaitersOrEnd() -> [Waiter] { pool.takeWaitersOrEnd(key, jobID: id) }

        /// Ends the job: every caller still waiting gets `result`.
        package func finish(with result: Result<Value, any Error>) { pool.finish(key, jobID: id, with: result) }
    }

    private struct Entry {
        var request: Request
        /// `nil` for a hold.
        var continuation: CheckedContinuation<Value, any Error>?
    }

    private struct JobState {
        /// The last waiter left (with ``Abandoning/keepUntilEnd``: the job stays until its task ends).
        var abandoned = false
    }

    /// The error a caller of an abandoned job that ended in an error gets (``Abandoning/keepUntilEnd``):
    /// it starts the work again.
    private struct Restart: Error {}

    private let jobs = LockedValue(CoalescingJobs<Key, Entry, JobState>())
    private let abandoning: Abandoning
    private let onAbandon: (@Sendable (Key) -> Void)?
    private let onChange: (@Sendable (Key) -> Void)?

    /// An empty pool.
    package init(abandoning: Abandoning = .remove, onAbandon: (@Sendable (Key) -> Void)? = nil,
                 onChange: (@Sendable (Key) -> Void)? = nil) {
        self.abandoning = abandoning
        self.onAbandon = onAbandon
        self.onChange = onChange
    }

    // MARK: Callers

    /// The value of `key`'s job for `request`, starting the job with `work` (whose result every caller
    /// gets) when there is none.
    /// - Throws: `CancellationError` when the calling task is cancelled, ``DeadlineExceeded`` at
    ///   `deadline`, or what `work` throws.
    package func value(for key: Key, request: Request, deadline: ContinuousClock.Instant? = nil,
                       _ work: @escaping @Sendable () async throws -> Value) async throws -> Outcome {
        try await value(for: key, request: request, deadline: deadline, run: { job in
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            job.finish(with: result)
        })
    }

    /// The value of `key`'s job for `request`, starting the job with `run` when there is none. `run`
    /// answers the callers through its ``Job``; callers still waiting when it returns get
    /// `CancellationError`.
    /// - Throws: as ``value(for:request:deadline:_:)``.
    package func value(for key: Key, request: Request, deadline: ContinuousClock.Instant? = nil,
                       run: @escaping @Sendable (Job) async -> Void) async throws -> Outcome {
        while true {
            do {
                return try await wait(for: key, request: request, deadline: deadline, run: run)
            } catch is Restart {
                continue
            }
        }
    }

    /// Adds a hold on `key`'s job for `request`, starting the job with `work` (whose result every caller
    /// gets) when there is none; returns the hold's id (for ``leave(_:)``).
    @discardableResult
    package func hold(_ key: Key, request: Request, _ work: @escaping @Sendable () async throws -> Value) -> Int {
        hold(key, request: request, run: { job in
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            job.finish(with: result)
        })
    }

    /// Adds a hold on `key`'s job for `request`, starting the job with `run` when there is none;
    /// returns the hold's id (for ``leave(_:)``).
    @discardableResult
    package func hold(_ key: Key, request: Request, run: @escaping @Sendable (Job) async -> Void) -> Int {
        let id = jobs.withLock { jobs in
            let id = jobs.makeID()
            if jobs[key] == nil { start(key, in: &jobs, run: run) }
            jobs.addWaiter(Entry(request: request, continuation: nil), id: id, to: key)
            return id
        }
        onChange?(key)
        return id
    }

    /// Removes waiter or hold `id`: a waiting caller gets `CancellationError`. A job nobody wants any
    /// more is abandoned.
    package func leave(_ id: Int) { leave(id, throwing: CancellationError()) }

    /// Every caller and hold whose request `matches` leaves (callers get `CancellationError`).
    package func cancelWaiters(where matches: (Key, Request) -> Bool) {
        let ids = jobs.withLock { jobs in
            jobs.all.flatMap { key, job in job.waiters.filter { matches(key, $0.value.request) }.map(\.key) }
        }
        for id in ids { leave(id) }
    }

    /// Changes the requests of every caller and hold of the jobs whose keys `matches`.
    package func updateRequests(where matches: (Key) -> Bool, _ body: (inout Request) -> Void) {
        let keys = jobs.withLock { jobs in
            let keys = jobs.all.keys.filter(matches)
            for key in keys { jobs.updateWaiters(of: key) { body(&$0.request) } }
            return keys
        }
        for key in keys { onChange?(key) }
    }

    // MARK: Inspection

    /// The requests of `key`'s callers and holds, in arrival order (empty when it has no job).
    package func requests(of key: Key) -> [Request] {
        jobs.withLock { jobs in
            guard let job = jobs[key] else { return [] }
            return job.waiters.keys.sorted().map { job.waiters[$0]!.request }
        }
    }

    /// Every job's key with the requests of its callers and of its holds.
    package func contents() -> [(key: Key, callers: [Request], holds: [Request])] {
        jobs.withLock { jobs in
            jobs.all.map { key, job in
                let entries = job.waiters.values
                return (key, entries.filter { $0.continuation != nil }.map(\.request),
                        entries.filter { $0.continuation == nil }.map(\.request))
            }
        }
    }

    /// Whether `key` has a job now.
    package func hasJob(_ key: Key) -> Bool { jobs.withLock { $0[key] != nil } }

    /// The keys of the jobs in the pool now.
    package var keys: [Key] { jobs.withLock { Array($0.all.keys) } }

    /// Jobs in the pool now.
    package var jobCount: Int { jobs.withLock { $0.all.count } }

    /// Callers waiting for `key`'s job now (holds not included).
    package func waiterCount(for key: Key) -> Int {
        jobs.withLock { $0[key]?.waiters.values.filter { $0.continuation != nil }.count ?? 0 }
    }

    // MARK: Internals

    private func wait(for key: Key, request: Request, deadline: ContinuousClock.Instant?,
                      run: @escaping @Sendable (Job) async -> Void) async throws -> Outcome {
        let id = jobs.withLock { $0.makeID() }
        let timer = LockedValue<Task<Void, Never>?>(nil)
        defer { timer.withLock { $0 }?.cancel() }
        var joined = false
        let value = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let registered = jobs.withLock { jobs -> Bool in
                    // The cancellation handler may have run already: then nothing is registered.
                    if Task.isCancelled { return false }
                    if jobs[key] == nil { start(key, in: &jobs, run: run) } else { joined = true }
                    jobs.addWaiter(Entry(request: request, continuation: continuation), id: id, to: key)
                    return true
                }
                guard registered else { continuation.resume(throwing: CancellationError()); return }
                onChange?(key)
                guard let deadline else { return }
                timer.withLock { timer in
                    timer = Task { [self] in
                        do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
                        leave(id, throwing: DeadlineExceeded())
                    }
                }
            }
        } onCancel: {
            leave(id, throwing: CancellationError())
        }
        return Outcome(value: value, joined: joined)
    }

    /// Registers a job for `key` and starts its task (under the lock: the task is known before anyone
    /// can abandon the job). When `run` returns, callers still waiting get `CancellationError`.
    private func start(_ key: Key, in jobs: inout CoalescingJobs<Key, Entry, JobState>,
                       run: @escaping @Sendable (Job) async -> Void) {
        let jobID = jobs.startJob(for: key, extra: JobState())
        let job = Job(key: key, id: jobID, pool: self)
        jobs[key]!.task = Task.detached {
            await run(job)
            job.finish(with: .failure(CancellationError()))
        }
    }

    private func requests(of key: Key, jobID: Int) -> [Request] {
        jobs.withLock { jobs in
            guard let job = jobs[key], job.id == jobID else { return [] }
            return job.waiters.keys.sorted().compactMap { id in
                job.waiters[id]!.continuation == nil ? nil : job.waiters[id]!.request
            }
        }
    }

    private func commit(_ key: Key, jobID: Int) {
        jobs.withLock { jobs in
            guard jobs.isCurrent(key, jobID: jobID) else { return }
            jobs[key]!.committed = true
        }
    }

    private func takeWaitersOrEnd(_ key: Key, jobID: Int) -> [Waiter] {
        let taken = jobs.withLock { jobs -> [Waiter] in
            let callers = jobs.takeWaiters(of: key, jobID: jobID, where: { $0.continuation != nil })
            if callers.isEmpty { _ = jobs.removeJob(key, jobID: jobID) }
            return callers.map { Waiter(request: $0.waiter.request, continuation: $0.waiter.continuation!) }
        }
        onChange?(key)
        return taken
    }

    private func finish(_ key: Key, jobID: Int, with result: Result<Value, any Error>) {
        guard let job = jobs.withLock({ $0.removeJob(key, jobID: jobID) }) else { return }
        let restart = job.abandoned && abandoning == .keepUntilEnd
        for entry in job.waiters.values {
            guard let continuation = entry.continuation else { continue }
            if restart, case .failure = result { continuation.resume(throwing: Restart()) } else { continuation.resume(with: result) }
        }
        onChange?(key)
    }

    /// A waiter that left its job, and whether the job was abandoned just then (with its task).
    private struct Left {
        let key: Key
        let entry: Entry
        var abandoned: Bool
        var task: Task<Void, Never>?
    }

    /// Removes waiter `id`, if it is still there: a caller is resumed with `error`. When it was the last
    /// one of a job that is not committed, the job is abandoned.
    private func leave(_ id: Int, throwing error: any Error) {
        let left = jobs.withLock { jobs -> Left? in
            guard let (key, entry) = jobs.removeWaiter(id) else { return nil }
            var left = Left(key: key, entry: entry, abandoned: false, task: nil)
            guard var job = jobs[key], job.waiters.isEmpty, !job.committed, !job.abandoned else { return left }
            switch abandoning {
            case .remove:
                _ = jobs.removeJob(key)
            case .keepUntilEnd:
                job.abandoned = true
                jobs[key] = job
            }
            left.abandoned = true
            left.task = job.task
            return left
        }
        guard let left else { return }
        if left.abandoned {
            left.task?.cancel()
            onAbandon?(left.key)
        }
        left.entry.continuation?.resume(throwing: error)
        onChange?(left.key)
    }
}
