/// The bookkeeping of request coalescing under ``TaskPool``: at most one job per key, any number of
/// waiters on it, and "the last waiter to leave abandons the job". The pool keeps it under its lock,
/// starts the jobs' tasks and resumes their waiters; this type only records who waits for what.
/// Waiters are added and removed only through these methods, so each waiter id maps to one key.
package struct CoalescingJobs<Key: Hashable, Waiter, Extra> {
    /// One key's job.
    @dynamicMemberLookup
    package struct Job {
        /// Distinguishes this job from a later one for the same key.
        package let id: Int
        /// The waiters, by waiter id.
        package fileprivate(set) var waiters: [Int: Waiter] = [:]
        /// The task doing the work, once started.
        package var task: Task<Void, Never>?
        /// Set once the job may no longer be abandoned (its result is being delivered).
        package var committed = false
        /// What the owner keeps per job besides its waiters.
        package var extra: Extra

        /// The owner's per-job fields, as if they were the job's own.
        package subscript<T>(dynamicMember path: WritableKeyPath<Extra, T>) -> T {
            get { extra[keyPath: path] }
            set { extra[keyPath: path] = newValue }
        }

        /// The owner's read-only per-job values.
        package subscript<T>(dynamicMember path: KeyPath<Extra, T>) -> T { extra[keyPath: path] }
    }

    private var jobs: [Key: Job] = [:]
    private var keyOfWaiter: [Int: Key] = [:]
    private var lastID = 0

    /// No jobs.
    package init() {}

    /// A fresh id for a waiter, a job or anything else the owner numbers (increasing, never reused).
    package mutating func makeID() -> Int {
        lastID += 1
        return lastID
    }

    /// The job of `key`, if any. Setting it may change everything but its waiters (use the methods).
    package subscript(key: Key) -> Job? {
        get { jobs[key] }
        set {
            guard let newValue else { _ = removeJob(key); return }
            assert(jobs[key].map { $0.id == newValue.id && Set($0.waiters.keys) == Set(newValue.waiters.keys) } ?? newValue.waiters.isEmpty,
                   "waiters change only through CoalescingJobs' methods")
            jobs[key] = newValue
        }
    }

    /// Every job with its key.
    package var all: [Key: Job] { jobs }

    /// Starts a job for `key` (there must be none) with `extra`; returns its id. The owner then sets its task.
    package mutating func startJob(for key: Key, extra: Extra) -> Int {
        precondition(jobs[key] == nil, "one job per key")
        let id = makeID()
        jobs[key] = Job(id: id, extra: extra)
        return id
    }

    /// Whether `key`'s job is the one numbered `jobID` (a finished or abandoned job's task learns so here).
    package func isCurrent(_ key: Key, jobID: Int) -> Bool { jobs[key]?.id == jobID }

    /// Adds `waiter` as `id` to `key`'s job (which must exist).
    package mutating func addWaiter(_ waiter: Waiter, id: Int, to key: Key) {
        precondition(jobs[key] != nil, "a waiter joins an existing job")
        jobs[key]!.waiters[id] = waiter
        keyOfWaiter[id] = key
    }

    /// Changes every waiter of `key`'s job with `body` (not their number).
    package mutating func updateWaiters(of key: Key, _ body: (inout Waiter) -> Void) {
        guard var job = jobs[key] else { return }
        for id in job.waiters.keys { body(&job.waiters[id]!) }
        jobs[key] = job
    }

    /// Removes waiter `id` wherever it waits; returns its key and itself, or `nil` when it is gone.
    package mutating func removeWaiter(_ id: Int) -> (key: Key, waiter: Waiter)? {
        guard let key = keyOfWaiter.removeValue(forKey: id),
              let waiter = jobs[key]?.waiters.removeValue(forKey: id) else { return nil }
        return (key, waiter)
    }

    /// Removes and returns the waiters (with their ids) of job `jobID` of `key` that `wanted` selects, in
    /// waiter-id order.
    package mutating func takeWaiters(of key: Key, jobID: Int,
                                      where wanted: (Waiter) -> Bool = { _ in true }) -> [(id: Int, waiter: Waiter)] {
        guard var job = jobs[key], job.id == jobID else { return [] }
        var taken: [(id: Int, waiter: Waiter)] = []
        for id in job.waiters.keys.sorted() where wanted(job.waiters[id]!) {
            taken.append((id, job.waiters.removeValue(forKey: id)!))
            keyOfWaiter[id] = nil
        }
        jobs[key] = job
        return taken
    }

    /// Removes `key`'s job (only if it is `jobID`, when given) with its waiters; returns it so the owner
    /// can cancel its task and resume its waiters.
    package mutating func removeJob(_ key: Key, jobID: Int? = nil) -> Job? {
        guard let job = jobs[key], jobID == nil || job.id == jobID else { return nil }
        jobs[key] = nil
        for id in job.waiters.keys { keyOfWaiter[id] = nil }
        return job
    }

    /// Removes `key`'s job when nobody needs it any more: no waiters, not committed, and not
    /// `stillWanted` by the owner's own measure (for example a pending prefetch). Returns the removed
    /// job: the owner cancels its task.
    package mutating func abandonIfUnwanted(_ key: Key, stillWanted: (Job) -> Bool = { _ in false }) -> Job? {
        guard let job = jobs[key], job.waiters.isEmpty, !job.committed, !stillWanted(job) else { return nil }
        return removeJob(key)
    }
}
