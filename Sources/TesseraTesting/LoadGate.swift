@_spi(Internal) import TesseraImaging

/// A gate a scripted load waits behind until the test opens it: the way to hold a download "in flight"
/// without sleeping. A waiter whose task is cancelled stops waiting at once with `CancellationError`.
///
/// ```swift
/// let gate = LoadGate()
/// loader.set(.image(png, gate: gate), for: url)
/// let task = Task { try await manager.image(for: url) }
/// await loader.waitForLoads(of: url, count: 1)   // the load has started and waits
/// gate.open()
/// ```
public final class LoadGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var nextID = 0
    }

    private let state = LockedValue(State())

    /// A closed gate.
    public init() {}

    /// Whether ``open()`` was called.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate: every waiter goes on, and later waits return at once.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the gate is open; throws `CancellationError` when the calling task is cancelled first.
    public func wait() async throws {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isOpen { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
                // Cancelled before the continuation was registered: the handler found nothing to resume.
                if Task.isCancelled { cancel(id) }
            }
        } onCancel: {
            cancel(id)
        }
    }

    private func cancel(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
    }
}
