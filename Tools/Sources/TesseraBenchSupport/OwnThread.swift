import Foundation

/// Runs blocking work (`waitpid`, a blocking socket, a pipe read to its end) on a thread of its own and
/// suspends the caller until it returns.
///
/// Not on Swift's cooperative pool: it has one thread per core (two on the CI machine), and tests that
/// block them can stall every other test, including the ones whose progress the blocked tests wait for
/// (an in-process origin a child fetches from, a test that must stop the browser holding a pipe open).
/// Not on Dispatch's pool either, which on Linux adds threads slowly while its threads block.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// ``onOwnThread(_:)`` for work that cannot fail.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
