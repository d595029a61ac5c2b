#if HTTPLoader
@_spi(Internal) import TesseraImaging

/// Resumes one continuation with whichever outcome arrives first (a load's result, its timeout or its
/// cancellation) and ignores the rest. An outcome that arrives before the continuation is installed
/// is kept and delivered on installation.
final class FirstOutcome<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var early: Result<Value, any Error>?
        var finished = false
    }

    private let state = LockedValue(State())

    /// Installs the continuation to resume.
    func install(_ continuation: CheckedContinuation<Value, any Error>) {
        let early: Result<Value, any Error>? = state.withLock { state in
            if let early = state.early { state.early = nil; return early }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Delivers `result` if it is the first outcome; returns whether it was.
    @discardableResult
    func finish(_ result: Result<Value, any Error>) -> Bool {
        let (first, continuation): (Bool, CheckedContinuation<Value, any Error>?) = state.withLock { state in
            guard !state.finished else { return (false, nil) }
            state.finished = true
            guard let continuation = state.continuation else { state.early = result; return (true, nil) }
            state.continuation = nil
            return (true, continuation)
        }
        continuation?.resume(with: result)
        return first
    }
}
#endif
