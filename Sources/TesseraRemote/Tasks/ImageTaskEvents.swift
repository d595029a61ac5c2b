@_spi(Internal) import TesseraImaging
import Foundation

/// Hands an ``ImageTask``'s events to every sequence made from it (``ImageTask/events``,
/// ``ImageTask/progress``), synchronously and in order, and ends them when the task ends.
final class ImageTaskEvents: Sendable {
    private struct State {
        var events: [Int: AsyncStream<ImageTask.Event>.Continuation] = [:]
        var progress: [Int: AsyncStream<LoadProgress>.Continuation] = [:]
        var finished: Result<ImageResponse, TesseraError>?
        var lastID = 0
    }

    private let state = LockedValue(State())

    /// A new sequence of events; only the last one when the task has ended.
    func events() -> AsyncStream<ImageTask.Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: ImageTask.Event.self)
        let finished = state.withLock { state -> Result<ImageResponse, TesseraError>? in
            if let finished = state.finished { return finished }
            state.lastID += 1
            let id = state.lastID
            state.events[id] = continuation
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.events.removeValue(forKey: id) } }
            return nil
        }
        if let finished {
            continuation.yield(.finished(finished))
            continuation.finish()
        }
        return stream
    }

    /// A new sequence of progress reports; empty when the task has ended.
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

    /// Reports the end and ends every sequence.
    func finish(with result: Result<ImageResponse, TesseraError>) {
        let (events, progress) = state.withLock { state in
            state.finished = result
            defer { state.events = [:]; state.progress = [:] }
            return (Array(state.events.values), Array(state.progress.values))
        }
        for continuation in events {
            continuation.yield(.finished(result))
            continuation.finish()
        }
        for continuation in progress { continuation.finish() }
    }
}
