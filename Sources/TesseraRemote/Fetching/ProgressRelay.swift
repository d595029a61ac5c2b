@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// Forwards each URL's download progress to every caller waiting for that URL that asked for it,
/// synchronously and in order (a hop through an actor per chunk could reorder reports). A caller adds
/// its handler when its request starts and removes it when the request ends; the URL's data job reports.
final class ProgressRelay: Sendable {
    private struct State {
        var handlers: [URL: [Int: @Sendable (LoadProgress) -> Void]] = [:]
        var lastID = 0
    }

    private let state = LockedValue(State())

    /// Adds `handler` for `url`; returns its id for ``remove(_:for:)`` (`nil` without a handler).
    func add(_ handler: (@Sendable (LoadProgress) -> Void)?, for url: URL) -> Int? {
        guard let handler else { return nil }
        return state.withLock { state in
            state.lastID += 1
            state.handlers[url, default: [:]][state.lastID] = handler
            return state.lastID
        }
    }

    /// Removes handler `id` of `url`.
    func remove(_ id: Int?, for url: URL) {
        guard let id else { return }
        state.withLock { state in
            state.handlers[url]?[id] = nil
            if state.handlers[url]?.isEmpty == true { state.handlers[url] = nil }
        }
    }

    /// Reports `progress` of `url` to its handlers.
    func report(_ progress: LoadProgress, for url: URL) {
        let current = state.withLock { $0.handlers[url].map { Array($0.values) } ?? [] }
        for handler in current { handler(progress) }
    }
}
