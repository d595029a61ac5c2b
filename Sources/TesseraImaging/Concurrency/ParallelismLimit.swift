import Foundation

/// The one bounded-parallelism primitive in Tessera: at most ``width`` bodies run at once, however
/// many tasks ask. A caller over the limit waits suspended (no thread is blocked), and permits are
/// handed out first come, first served.
///
/// Used for CPU work (decoding, drawing): `tessera table ingest --jobs N`, `ImageCache` fills and
/// `ImageManager` decodes. I/O (provider calls, downloads) stays outside the limit, except the loads
/// of `ImageManager` requests with their own credentials, which bypass the download lanes and are
/// bounded by a limit of their own (``runAsync(_:)``).
@_spi(Internal) public final class ParallelismLimit: Sendable {
    /// How many bodies may run at once (at least 1).
    public let width: Int
    private let state = LockedValue(State())

    private struct State {
        var running = 0
        var nextWaiter = 0
        /// Waiters in arrival order (ids increase).
        var waiters: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
    }

    /// The machine's active cores: the default width everywhere.
    public static var coreCount: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// A limit of `width` (values below 1 count as 1).
    public init(width: Int) {
        self.width = max(1, width)
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

    private func acquire() async throws {
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { s -> Bool? in
                    if Task.isCancelled { return false }
                    if s.running < width {
                        s.running += 1
                        return true
                    }
                    s.waiters.append((id, continuation))
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { s -> CheckedContinuation<Void, any Error>? in
                guard let index = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: index).continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// Hands the permit to the first waiter, or frees it.
    private func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, any Error>? in
            if s.waiters.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}
