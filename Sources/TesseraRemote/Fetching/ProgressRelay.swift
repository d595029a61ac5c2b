@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// Forwards a download's progress to every requester that asked for it, synchronously and in order
/// (a hop through an actor per chunk could reorder reports).
final class ProgressRelay: Sendable {
    private let handlers = LockedValue<[Int: @Sendable (LoadProgress) -> Void]>([:])

    func add(_ id: Int, _ handler: (@Sendable (LoadProgress) -> Void)?) {
        guard let handler else { return }
        handlers.withLock { $0[id] = handler }
    }

    func remove(_ id: Int) {
        _ = handlers.withLock { $0.removeValue(forKey: id) }
    }

    func report(_ progress: LoadProgress) {
        let current = handlers.withLock { Array($0.values) }
        for handler in current { handler(progress) }
    }
}
