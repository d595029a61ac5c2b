#if Serving
@_spi(Internal) import TesseraImaging

/// The server's keyed task pool: the library's ``TaskPool`` with one job per key, any number of callers
/// waiting for it, each until its own deadline.
///
/// - **Joining.** A caller whose key has a job waits for that job (``Outcome/joined`` is then true).
/// - **Deadlines.** A caller's wait ends at its deadline with `504 timeout`, or when its task is
///   cancelled: its answer does not wait for the work. The job goes on for its other waiters.
/// - **Abandoning.** When the last waiter has left, the job's task is cancelled: it stops at its next
///   cancellation point (a place in a decode queue, say). Work already running to its end (a decode
///   cannot be interrupted) finishes and keeps what it made (a table entry), so the next request finds
///   it. The job stays registered until its task ends (``TaskPool/Abandoning/keepUntilEnd``), so a caller
///   arriving meanwhile joins it rather than starting the same work twice; if the abandoned job then
///   ends in an error, that caller starts it again (and finds what was kept).
final class WorkPool<Value: Sendable>: Sendable {
    private let pool = TaskPool<String, Void, Value>(abandoning: .keepUntilEnd)

    /// A value and whether the caller joined a job that was already running.
    struct Outcome: Sendable {
        var value: Value
        var joined: Bool
    }

    /// The value of `key`'s job, starting it with `work` when none runs.
    /// - Throws: `ServiceError(.timeout)` at `deadline` (`nil`: none), `CancellationError` when the calling task is
    ///   cancelled, or what `work` throws.
    func value(for key: String, deadline: ContinuousClock.Instant?,
               _ work: @escaping @Sendable () async throws -> Value) async throws -> Outcome {
        do {
            let outcome = try await pool.value(for: key, request: (), deadline: deadline, work)
            return Outcome(value: outcome.value, joined: outcome.joined)
        } catch is TaskPool<String, Void, Value>.DeadlineExceeded {
            throw ServiceError(.timeout, "the request took longer than the limit")
        }
    }

    /// Jobs registered now (for tests).
    var jobCount: Int { pool.jobCount }

    /// Callers waiting for `key`'s job now (for tests).
    func waiterCount(for key: String) -> Int { pool.waiterCount(for: key) }
}
#endif
