@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The one object that decides when a download starts: the urgent and slow lanes of an
/// ``ImageManager`` and their slots. A data job asks it for a slot (``slot(for:order:lane:)``), downloads,
/// and gives the slot back (``release(_:)``); the scheduler knows nothing else about jobs.
///
/// Lane rules (``FetchScheduling/prioritized``):
/// - A download's lane is the one its job wants (``refreshLane(of:_:)``): urgent while anyone awaits it
///   urgently, slow otherwise.
/// - Up to `urgentWidth` urgent downloads run at once, first come first served.
/// - One slow download runs at a time, and one starts only when no urgent download runs or waits:
///   the slow lane *pauses* (starts nothing new) while urgent work exists. A slow download that is
///   already running is left to finish — cutting it off would waste the bytes already received.
/// - Promotion: a queued slow download that becomes urgent moves to the back of the urgent queue; a
///   running one is relabelled urgent (never a second download).
/// - Demotion: the download goes to the *front* of the slow queue (it was wanted most recently, so it is
///   the prefetch most likely to be needed next); a running download is relabelled slow and finishes.
/// - Queues are ordered by request order (``nextOrder()``, taken when the request arrives), not by when
///   each job finished its disk lookup.
///
/// With ``FetchScheduling/fifo`` every download waits in one first-in-first-out queue of `urgentWidth`.
final class FetchScheduler: Sendable {
    /// A granted slot: give it back with ``release(_:)`` when the download ends.
    struct Slot: Sendable {
        fileprivate let id: Int
    }

    private struct Entry {
        let url: URL
        var lane: FetchPriority
        var order: Int
        /// The job waiting for its slot; `nil` once it runs.
        var waiting: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var urgentQueue: [Int] = []
        var slowQueue: [Int] = []
        var running: Set<Int> = []
        /// The entry of each URL's download, for lane changes.
        var entryOfURL: [URL: Int] = [:]
        var lastID = 0
        var lastOrder = 0
        var frontOrder = 0
    }

    private let state = LockedValue(State())
    private let urgentWidth: Int
    private let scheduling: FetchScheduling
    private let onChange: @Sendable () -> Void

    /// A scheduler of `urgentWidth` urgent slots (at least 1); `onChange` hears every change of the lanes.
    init(urgentWidth: Int, scheduling: FetchScheduling, onChange: @escaping @Sendable () -> Void) {
        self.urgentWidth = max(1, urgentWidth)
        self.scheduling = scheduling
        self.onChange = onChange
    }

    /// A place in the request order, for a request arriving now.
    func nextOrder() -> Int {
        state.withLock { state in
            state.lastOrder += 1
            return state.lastOrder
        }
    }

    /// Waits until the lane rules let the download of `url` start, and returns its slot. `lane` says
    /// which lane the download wants; it is asked under the scheduler's lock, now and on every
    /// ``refreshLane(of:_:)``.
    /// - Throws: `CancellationError` when the calling task is cancelled while waiting.
    func slot(for url: URL, order: Int, lane: () -> FetchPriority) async throws -> Slot {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let started = state.withLock { state -> [CheckedContinuation<Void, any Error>]? in
                    // The cancellation handler may have run already: then nothing is queued.
                    if Task.isCancelled { return nil }
                    state.entries[id] = Entry(url: url, lane: lane(), order: order, waiting: continuation)
                    state.entryOfURL[url] = id
                    enqueue(id, in: &state)
                    return schedule(&state)
                }
                guard let started else { continuation.resume(throwing: CancellationError()); return }
                for job in started { job.resume() }
                onChange()
            }
        } onCancel: {
            leave(id)
        }
        return Slot(id: id)
    }

    /// Gives back a slot: the next download the lane rules allow starts.
    func release(_ slot: Slot) {
        let started = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.running.remove(slot.id)
            remove(slot.id, from: &state)
            return schedule(&state)
        }
        for job in started { job.resume() }
        onChange()
    }

    /// Asks the download of `url` (queued or running) for its lane again: a changed lane moves it to
    /// the other queue (prioritized scheduling) or relabels it while it runs.
    func refreshLane(of url: URL, _ lane: () -> FetchPriority) {
        let started = state.withLock { state -> [CheckedContinuation<Void, any Error>]? in
            guard let id = state.entryOfURL[url], var entry = state.entries[id] else { return nil }
            let wanted = lane()
            guard wanted != entry.lane else { return nil }
            let previous = entry.lane
            entry.lane = wanted
            if scheduling == .prioritized {
                if wanted == .urgent {
                    state.lastOrder += 1
                    entry.order = state.lastOrder
                } else {
                    state.frontOrder -= 1
                    entry.order = state.frontOrder
                }
            }
            state.entries[id] = entry
            if entry.waiting != nil, scheduling == .prioritized {
                dequeue(id, lane: previous, in: &state)
                enqueue(id, in: &state)
            }
            return schedule(&state)
        }
        guard let started else { return }
        for job in started { job.resume() }
        onChange()
    }

    /// The downloads running and queued per lane, queues in the order they will start.
    func lanes() -> (urgentRunning: Set<URL>, slowRunning: Set<URL>, urgentQueued: [URL], slowQueued: [URL]) {
        state.withLock { state in
            var urgentRunning: Set<URL> = [], slowRunning: Set<URL> = []
            for id in state.running {
                guard let entry = state.entries[id] else { continue }
                if entry.lane == .urgent { urgentRunning.insert(entry.url) } else { slowRunning.insert(entry.url) }
            }
            return (urgentRunning, slowRunning, state.urgentQueue.map { state.entries[$0]!.url },
                    state.slowQueue.map { state.entries[$0]!.url })
        }
    }

    // MARK: Internals

    /// A queued download whose task was cancelled leaves its queue (a running one gives its slot back).
    private func leave(_ id: Int) {
        let (left, started) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<Void, any Error>]) in
            guard let waiting = state.entries[id]?.waiting else { return (nil, []) }
            remove(id, from: &state)
            return (waiting, schedule(&state))
        }
        guard let left else { return }
        left.resume(throwing: CancellationError())
        for job in started { job.resume() }
        onChange()
    }

    private func remove(_ id: Int, from state: inout State) {
        guard let entry = state.entries.removeValue(forKey: id) else { return }
        if entry.waiting != nil { dequeue(id, lane: entry.lane, in: &state) }
        if state.entryOfURL[entry.url] == id { state.entryOfURL[entry.url] = nil }
    }

    /// Inserts `id` into its lane's queue by order.
    private func enqueue(_ id: Int, in state: inout State) {
        let entry = state.entries[id]!
        func insert(into queue: inout [Int]) {
            var index = queue.count
            while index > 0, state.entries[queue[index - 1]]!.order > entry.order { index -= 1 }
            queue.insert(id, at: index)
        }
        if scheduling == .fifo || entry.lane == .urgent { insert(into: &state.urgentQueue) } else { insert(into: &state.slowQueue) }
    }

    private func dequeue(_ id: Int, lane: FetchPriority, in state: inout State) {
        if scheduling == .fifo || lane == .urgent { state.urgentQueue.removeAll { $0 == id } } else { state.slowQueue.removeAll { $0 == id } }
    }

    /// Starts what the lane rules allow; returns the jobs to resume (outside the lock).
    private func schedule(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        var started: [CheckedContinuation<Void, any Error>] = []
        func start(_ id: Int) {
            guard let waiting = state.entries[id]?.waiting else { return }
            state.entries[id]!.waiting = nil
            state.running.insert(id)
            started.append(waiting)
        }
        func count(_ lane: FetchPriority) -> Int { state.running.count { state.entries[$0]?.lane == lane } }
        if scheduling == .fifo {
            while state.running.count < urgentWidth, !state.urgentQueue.isEmpty { start(state.urgentQueue.removeFirst()) }
        } else {
            while count(.urgent) < urgentWidth, !state.urgentQueue.isEmpty { start(state.urgentQueue.removeFirst()) }
            if count(.urgent) == 0, state.urgentQueue.isEmpty, count(.prefetch) == 0, !state.slowQueue.isEmpty {
                start(state.slowQueue.removeFirst())
            }
        }
        return started
    }
}
