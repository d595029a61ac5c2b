#if Serving
import NIOCore
import NIOPosix
@_spi(Internal) import TesseraImaging

/// The server's keyed task pool, on the library's coalescing bookkeeping (`CoalescingJobs`): at most one
/// job per key, any number of callers waiting for it, each until its own deadline.
///
/// - **Joining.** A caller whose key has a job waits for that job (``Outcome/joined`` is then true).
/// - **Deadlines.** A caller's wait ends at its deadline with `504 timeout`, or when its task is
///   cancelled: its answer does not wait for the work. The job goes on for its other waiters.
/// - **Abandoning.** When the last waiter has left, the job's task is cancelled: it stops at its next
///   cancellation point (a place in a decode queue, say). Work already running to its end (a decode
///   cannot be interrupted) finishes and keeps what it made (a table entry), so the next request finds
///   it. The job stays registered until its task ends, so a caller arriving meanwhile joins it rather
///   than starting the same work twice; if the abandoned job then ends cancelled, that caller starts it
///   again (and finds what was kept).
final class WorkPool<Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value, any Error>

    /// What a job keeps besides its waiters: whether it was abandoned.
    private struct JobState { var abandoned = false }

    /// The error a waiter of an abandoned job that ended cancelled gets: its caller starts the job again.
    private struct Restart: Error {}

    private let jobs = LockedValue(CoalescingJobs<String, Waiter, JobState>())

    /// A value and whether the caller joined a job that was already running.
    struct Outcome: Sendable {
        var value: Value
        var joined: Bool
    }

    /// The value of `key`'s job, starting it with `work` when none runs.
    /// - Throws: `ServiceError(.timeout)` at `deadline` (`nil`: none), `CancellationError` when the calling task is
    ///   cancelled, or what `work` throws.
    func value(for key: String, deadline: NIODeadline?,
               _ work: @escaping @Sendable () async throws -> Value) async throws -> Outcome {
        while true {
            do {
                return try await wait(for: key, deadline: deadline, work)
            } catch is Restart {
                continue
            }
        }
    }

    private func wait(for key: String, deadline: NIODeadline?,
                      _ work: @escaping @Sendable () async throws -> Value) async throws -> Outcome {
        let waiterID = jobs.withLock { $0.makeID() }
        let timer = LockedValue<Scheduled<Void>?>(nil)
        defer { timer.withLock { $0 }?.cancel() }
        let joined = LockedValue(false)
        let value = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let started = jobs.withLock { jobs -> Int? in
                    var jobID: Int?
                    if jobs[key] == nil { jobID = jobs.startJob(for: key, extra: JobState()) }
                    jobs.addWaiter(continuation, id: waiterID, to: key)
                    return jobID
                }
                if let jobID = started {
                    start(key: key, jobID: jobID, work)
                } else {
                    joined.withLock { $0 = true }
                }
                // The cancellation handler may have run before the waiter was added: check again now.
                if Task.isCancelled { leave(waiterID, throwing: CancellationError()); return }
                guard let deadline else { return }
                let scheduled = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(deadline: deadline) { [self] in
                    leave(waiterID, throwing: ServiceError(.timeout, "the request took longer than the limit"))
                }
                timer.withLock { $0 = scheduled }
            }
        } onCancel: {
            leave(waiterID, throwing: CancellationError())
        }
        return Outcome(value: value, joined: joined.withLock { $0 })
    }

    /// Starts the task of job `jobID`: when it ends, the job is removed and its waiters resumed.
    private func start(key: String, jobID: Int, _ work: @escaping @Sendable () async throws -> Value) {
        let task = Task.detached { [self] in
            let result: Result<Value, any Error>
            do { result = .success(try await work()) } catch { result = .failure(error) }
            let (waiters, abandoned) = jobs.withLock { jobs -> ([Waiter], Bool) in
                guard let job = jobs.removeJob(key, jobID: jobID) else { return ([], false) }
                return (Array(job.waiters.values), job.abandoned)
            }
            if abandoned, case .failure = result {
                for waiter in waiters { waiter.resume(throwing: Restart()) }
            } else {
                for waiter in waiters { waiter.resume(with: result) }
            }
        }
        let abandoned = jobs.withLock { jobs -> Bool in
            guard var job = jobs[key], job.id == jobID else { return false }
            job.task = task
            jobs[key] = job
            return job.abandoned   // its last waiter left before the task was known
        }
        if abandoned { task.cancel() }
    }

    /// Resumes waiter `id` with `error`, if it still waits; when it was its job's last waiter, the job's
    /// task is cancelled (the job stays registered until the task ends).
    private func leave(_ id: Int, throwing error: any Error) {
        let (waiter, task) = jobs.withLock { jobs -> (Waiter?, Task<Void, Never>?) in
            guard let (key, waiter) = jobs.removeWaiter(id) else { return (nil, nil) }
            guard var job = jobs[key], job.waiters.isEmpty, !job.abandoned else { return (waiter, nil) }
            job.abandoned = true
            jobs[key] = job
            return (waiter, job.task)
        }
        task?.cancel()
        waiter?.resume(throwing: error)
    }

    /// Jobs registered now (for tests).
    var jobCount: Int { jobs.withLock { $0.all.count } }

    /// Callers waiting for `key`'s job now (for tests).
    func waiterCount(for key: String) -> Int { jobs.withLock { $0[key]?.waiters.count ?? 0 } }
}
#endif
