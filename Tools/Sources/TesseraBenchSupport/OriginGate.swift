import TesseraImaging
@_spi(Internal) import TesseraImaging

/// A one-way gate that origin responses wait on until the caller opens it: explicit synchronisation
/// for tests, never a sleep. Once open it stays open, and later waiters pass at once.
public final class OriginGate: Sendable {
    private let state = LockedValue<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    /// Creates a closed gate.
    public init() {}

    /// Opens the gate and resumes every response waiting on it.
    public func open() {
        let waiting = state.withLock { state in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once the gate is open (at once if it already is).
    public func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if !state.open { state.waiting.append(continuation) }
                return state.open
            }
            if ready { continuation.resume() }
        }
    }
}
