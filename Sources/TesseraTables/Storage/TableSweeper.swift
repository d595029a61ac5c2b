@_spi(Internal) import TesseraImaging
import Foundation
import Synchronization

/// A thread per open table that answers other processes' sweep requests while this process makes no
/// calls into the table (a hit or a store answers them itself): it sleeps on the shared request word
/// (a futex; no CPU meanwhile) and, when a writer of another process found entries pinned here, clears
/// the pins of images this process no longer holds (``TableState/sweepPins()``). Without it, an idle
/// process would keep every slot it last read from eviction. The thread holds the table weakly and
/// ends with it.
final class TableSweeper: Sendable {
    private let stopped = Atomic<Bool>(false)

    /// Starts the thread for `table`.
    func start(for table: ImageTable) {
        let thread = Thread { [weak table, self] in
            var seen = table?.currentSharedRegion.sweepRequests ?? 0
            while !self.stopped.load(ordering: .acquiring) {
                guard let shared = table?.currentSharedRegion else { return }
                shared.waitForSweepRequest(after: seen, timeout: .seconds(5))
                // The table may have closed meanwhile: then its region is not looked at again.
                guard !self.stopped.load(ordering: .acquiring), table != nil else { return }
                let now = shared.sweepRequests
                guard now != seen else { continue }
                seen = now
                table?.sweepPinsIfAsked()
            }
        }
        thread.name = "tessera-table-sweeper"
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Ends the thread (waking it on `shared`'s request word).
    func stop(_ shared: TableSharedRegion) {
        stopped.store(true, ordering: .releasing)
        shared.wakeSweepers()
    }
}

extension ImageTable {
    /// The shared region of the table's current file.
    var currentSharedRegion: TableSharedRegion { state.withLock { $0.mapping.shared } }

    /// Sweeps this process's pins if another process asked since the last sweep.
    func sweepPinsIfAsked() { state.withLock { $0.sweepPinsIfAsked() } }
}
