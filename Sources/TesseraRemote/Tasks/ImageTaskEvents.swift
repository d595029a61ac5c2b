@_spi(Internal) import TesseraImaging
import Foundation

/// Hands an ``ImageTask``'s events to every sequence made from it (``ImageTask/events``,
/// ``ImageTask/progress``), synchronously and in order, and ends them when the task ends: at its answer,
/// or — when the answer was a stale copy being revalidated in the background — once the revalidation
/// has ended (``ImageTask/Event/refreshed(_:)`` may come in between).
final class ImageTaskEvents: Sendable {
    private struct State {
        var events: [Int: AsyncStream<ImageTask.Event>.Continuation] = [:]
        var progress: [Int: AsyncStream<LoadProgress>.Continuation] = [:]
        var finished: Result<ImageResponse, TesseraError>?
        /// Whether the sequences of events are ended (after the answer, and any revalidation).
        var closed = false
        /// Whether the events of a revalidation are no longer wanted (the task was cancelled).
        var refreshCancelled = false
        var lastID = 0
    }

    private let state = LockedValue(State())

    /// A new sequence of events. After the answer it starts with ``ImageTask/Event/finished(_:)``, and
    /// ends at once unless a revalidation is still running.
    func events() -> AsyncStream<ImageTask.Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: ImageTask.Event.self)
        let (finished, closed) = state.withLock { state -> (Result<ImageResponse, TesseraError>?, Bool) in
            if let finished = state.finished, state.closed { return (finished, true) }
            state.lastID += 1
            let id = state.lastID
            state.events[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.events.removeValue(forKey: id) } }
            // Yielded under the lock, so that no later event can overtake it.
            if let finished = state.finished { continuation.yield(.finished(finished)) }
            return (nil, false)
        }
        if let finished, closed {
            continuation.yield(.finished(finished))
            continuation.finish()
        }
        return stream
    }

    /// A new sequence of progress reports; empty when the task has answered.
    func progress() -> AsyncStream<LoadProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: LoadProgress.self)
        let ended = state.withLock { state -> Bool in
            if state.finished != nil { return true }
            state.lastID += 1
            let id = state.lastID
            state.progress[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.progress.removeValue(forKey: id) } }
            return false
        }
        if ended { continuation.finish() }
        return stream
    }

    /// Reports `event` to the sequences of events (and a progress report to those of progress).
    func send(_ event: ImageTask.Event) {
        state.withLock { state in
            for continuation in state.events.values { continuation.yield(event) }
            if case .progress(let progress) = event {
                for continuation in state.progress.values { continuation.yield(progress) }
            }
        }
    }

    /// Reports the answer and ends the sequences of progress; ends those of events too unless
    /// `refreshing` (a revalidation runs, and ``close()`` ends them) and the task was not cancelled.
    func finish(with result: Result<ImageResponse, TesseraError>, refreshing: Bool = false) {
        let (progress, close) = state.withLock { state in
            state.finished = result
            for continuation in state.events.values { continuation.yield(.finished(result)) }
            defer { state.progress = [:] }
            return (Array(state.progress.values), !refreshing || state.refreshCancelled)
        }
        for continuation in progress { continuation.finish() }
        if close { self.close() }
    }

    /// Ends every sequence of events (the revalidation after a stale answer ended, or is no longer watched).
    func close() {
        let events = state.withLock { state in
            state.closed = true
            defer { state.events = [:] }
            return Array(state.events.values)
        }
        for continuation in events { continuation.finish() }
    }

    /// The task was cancelled: a revalidation after its answer reports nothing more.
    func cancelRefresh() {
        let answered = state.withLock { state in
            state.refreshCancelled = true
            return state.finished != nil
        }
        if answered { close() }
    }
}
