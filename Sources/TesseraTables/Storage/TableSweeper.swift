@_spi(Internal) import TesseraImaging
import Foundation
import Synchronization

/// A thread per open table that answers other processes' sweep requests while this process makes no
/// calls into the table (a hit or a store answers them itself): it sleeps on the shared request word
/// (a futex; no CPU meanwhile) and, when a writer of another process found entries pinned here, clears
/// the pins of images this process no longer holds (``TableState/sweepPins()``). Without it, an idle
/// process would keep every slot it last read from eviction.
///
/// The thread reaches the table's state through ``target``, which the table's `deinit` empties
/// (``stop(_:)``): the thread never keeps the state, its mapping or its participant lock alive, and
/// holds no weak reference to the table (which would give the table a side table and every retain of
/// it on the hit path the slow path).
final class TableSweeper: Sendable {
    /// The table's state while the table lives.
    private let target: Mutex<LockedValue<TableState>?>

    init(_ state: LockedValue<TableState>) {
        target = Mutex(state)
    }

    /// Starts the thread, waiting on `shared`, the region of the table's file when it opened (after a
    /// file is replaced, the thread still wakes every few seconds and follows the table's current one).
    func start(_ shared: TableSharedRegion) {
        let thread = Thread { [self] in
            var shared = shared
            var seen = shared.sweepRequests
            while true {
                shared.waitForSweepRequest(after: seen, timeout: .seconds(5))
                let current: TableSharedRegion? = target.withLock { state in
                    guard let state else { return nil }
                    return state.withLock { s in
                        s.sweepPinsIfAsked()
                        return s.mapping.shared
                    }
                }
                guard let current else { return }   // the table closed
                shared = current
                seen = shared.sweepRequests
            }
        }
        thread.name = "tessera-table-sweeper"
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Lets the state go and ends the thread (waking it on `shared`'s request word).
    func stop(_ shared: TableSharedRegion) {
        target.withLock { $0 = nil }
        shared.wakeSweepers()
    }
}
