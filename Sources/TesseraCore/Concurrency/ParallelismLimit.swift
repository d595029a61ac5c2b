import Foundation

/// The one bounded-parallelism primitive in Tessera: at most ``width`` bodies run at once, however
/// many tasks ask. A caller over the limit waits suspended (no thread is blocked), and permits are
/// handed out first come, first served.
///
/// Meant for CPU work (decoding, drawing); I/O should stay outside it, and ``runAsync(_:)`` bounds the
/// rare asynchronous work that needs a limit of its own.
///
/// With a ``queueLimit``, at most that many callers wait: one more is refused at once with
/// ``QueueFull`` (a server answers it with 503), so the memory held by waiting work stays bounded
/// under any load. An `observer` hears the running and waiting counts after every change.
@_spi(Internal) public final class ParallelismLimit: Sendable {
    /// How many bodies may run at once (at least 1).
    public let width: Int
    /// How many callers may wait for a permit; `nil`: any number.
    public let queueLimit: Int?
    private let state = LockedValue(State())
    private let observer: (@Sendable (_ running: Int, _ waiting: Int) -> Void)?

    /// Thrown by ``run(_:)`` and ``runAsync(_:)`` when ``queueLimit`` callers wait already.
    public struct QueueFull: Error, Sendable, CustomStringConvertible {
        /// The limit's ``queueLimit``.
        public let queueLimit: Int
        /// `"N callers wait already"`.
        public var description: String { "\(queueLimit) callers wait already" }
    }

    private struct State {
        var running = 0
        var nextWaiter = 0
        /// Waiters in arrival order (ids increase).
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    /// The machine's active cores: the default width everywhere.
    public static var coreCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// A limit of `width` (values below 1 count as 1), with at most `queueLimit` callers waiting
    /// (`nil`: no bound; negative counts as 0) and an `observer` of the counts.
    public init(width: Int, queueLimit: Int? = nil, observer: (@Sendable (_ running: Int, _ waiting: Int) -> Void)? = nil) {
        self.width = max(1, width)
        self.queueLimit = queueLimit.map { max(0, $0) }
        self.observer = observer
    }

    /// Runs `body` once a permit is free and returns its result; the permit is returned afterwards,
    /// also when `body` throws.
    /// - Throws: `CancellationError` when the task is cancelled while it waits (the body never ran),
    ///   or what `body` throws.
    public func run<T>(_ body: () throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try body()
    }

    /// ``run(_:)`` for an asynchronous `body`: the permit is held while it is suspended too.
    public func runAsync<T>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Calls `body` for every element of `items`, at most ``width`` at a time, and returns when all
    /// have finished. Each call gets the element's index.
    public func forEach<Element: Sendable>(_ items: [Element], _ body: @escaping @Sendable (Int, Element) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while next < items.count, next < width {
                let index = next
                group.addTask { await body(index, items[index]) }
                next += 1
            }
            while await group.next() != nil {
                guard next < items.count else { continue }
                let index = next
                group.addTask { await body(index, items[index]) }
                next += 1
            }
        }
    }

    /// Bodies running now (for tests and diagnostics).
    public var running: Int { state.withLock { $0.running } }
    /// Callers waiting for a permit now.
    public var waiting: Int { state.withLock { $0.waiters.count } }

    private func acquire() async throws {
        enum Outcome { case run, wait, cancelled, refused }
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (outcome, counts) = state.withLock { s -> (Outcome, (Int, Int)) in
                    let outcome: Outcome
                    if Task.isCancelled {
                        outcome = .cancelled
                    } else if s.running < width {
                        s.running += 1
                        outcome = .run
                    } else if let queueLimit, s.waiters.count >= queueLimit {
                        outcome = .refused
                    } else {
                        s.waiters.append((id, continuation))
                        outcome = .wait
                    }
                    return (outcome, (s.running, s.waiters.count))
                }
                if outcome == .run || outcome == .wait { observer?(counts.0, counts.1) }
                switch outcome {
                case .run: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .refused: continuation.resume(throwing: QueueFull(queueLimit: queueLimit ?? 0))
                case .wait: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { s -> (CheckedContinuation<Void, any Error>, (Int, Int))? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return (s.waiters.remove(at: index).continuation, (s.running, s.waiters.count))
            }
            guard let (continuation, counts) = waiting else { return }
            observer?(counts.0, counts.1)
            continuation.resume(throwing: CancellationError())
        }
    }

    /// Hands the permit to the first waiter, or frees it.
    private func release() {
        let (next, counts) = state.withLock { s -> (CheckedContinuation<Void, any Error>?, (Int, Int)) in
            if s.waiters.isEmpty {
                s.running -= 1
                return (nil, (s.running, 0))
            }
            return (s.waiters.removeFirst().continuation, (s.running, s.waiters.count))
        }
        observer?(counts.0, counts.1)
        next?.resume()
    }
}
