@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// Forwards each data job's download progress to every caller waiting for that job that asked for it,
/// synchronously and in order (a hop through an actor per chunk could reorder reports). A caller adds
/// its handler when its request starts and removes it when the request ends; the data job reports.
final class ProgressRelay: Sendable {
    private struct State {
        var handlers: [DataKey: [Int: @Sendable (LoadProgress) -> Void]] = [:]
        var lastID = 0
    }

    private let state = LockedValue(State())

    /// Adds `handler` for `key`; returns its id for ``remove(_:for:)`` (`nil` without a handler).
    func add(_ handler: (@Sendable (LoadProgress) -> Void)?, for key: DataKey) -> Int? {
        guard let handler else { return nil }
        return state.withLock { state in
            state.lastID += 1
            state.handlers[key, default: [:]][state.lastID] = handler
            return state.lastID
        }
    }

    /// Removes handler `id` of `key`.
    func remove(_ id: Int?, for key: DataKey) {
        guard let id else { return }
        state.withLock { state in
            state.handlers[key]?[id] = nil
            if state.handlers[key]?.isEmpty == true { state.handlers[key] = nil }
        }
    }

    /// Reports `progress` of `key` to its handlers.
    func report(_ progress: LoadProgress, for key: DataKey) {
        let current = state.withLock { $0.handlers[key].map { Array($0.values) } ?? [] }
        for handler in current { handler(progress) }
    }
}
