@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The one object that decides when a download starts: the urgent and slow lanes of an
/// ``ImageManager`` and their slots. A data job asks it for a slot (``slot(for:order:priority:)``), downloads,
/// and gives the slot back (``release(_:)``); the scheduler knows nothing else about jobs.
///
/// Lane rules (``FetchScheduling/prioritized``):
/// - A download's level is the one its job wants (``refreshLane(of:_:)``): the highest level among the
///   requests waiting for it. Its lane follows (``/TesseraTables/FetchPriority``): urgent for `normal` and
///   above, slow for `low` and `veryLow`.
/// - Up to `urgentWidth` urgent downloads run at once; each queue starts its highest level first, and
///   within a level the earliest request.
/// - One slow download runs at a time, and one starts only when no urgent download runs or waits:
///   the slow lane *pauses* (starts nothing new) while urgent work exists. A slow download that is
///   already running is left to finish — cutting it off would waste the bytes already received.
/// - Promotion: a queued slow download that becomes urgent moves to the back of the urgent queue; a
///   running one is relabelled urgent (never a second download).
/// - Demotion: the download goes to the *front* of the slow queue (it was wanted most recently, so it is
///   the prefetch most likely to be needed next); a running download is relabelled slow and finishes.
/// - A change of level within a lane moves a queued download to its new place (keeping its request
///   order) and relabels a running one.
/// - Within a level, queues are ordered by request order (``nextOrder()``, taken when the request
///   arrives), not by when each job finished its disk lookup.
///
/// With ``FetchScheduling/fifo`` every download waits in one first-in-first-out queue of `urgentWidth`.
final class FetchScheduler: Sendable {
    /// A granted slot: give it back with ``release(_:)`` when the download ends.
    struct Slot: Sendable {
        fileprivate let id: Int
    }

    private struct Entry {
        let key: DataKey
        var priority: FetchPriority
        var isUrgent: Bool { priority.isUrgent }
        var order: Int
        /// The job waiting for its slot; `nil` once it runs.
        var waiting: CheckedContinuation<Void, any Error>?
    }

    private struct State {
        var entries: [Int: Entry] = [:]
        var urgentQueue: [Int] = []
        var slowQueue: [Int] = []
        var running: Set<Int> = []
        /// The entry of each data job's download, for lane changes.
        var entryOfKey: [DataKey: Int] = [:]
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

    /// Waits until the lane rules let the download of `key` start, and returns its slot. `priority` says
    /// which level the download wants; it is asked under the scheduler's lock, now and on every
    /// ``refreshLane(of:_:)``.
    /// - Throws: `CancellationError` when the calling task is cancelled while waiting.
    func slot(for key: DataKey, order: Int, priority: () -> FetchPriority) async throws -> Slot {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let started = state.withLock { state -> [CheckedContinuation<Void, any Error>]? in
                    // The cancellation handler may have run already: then nothing is queued.
                    if Task.isCancelled { return nil }
                    state.entries[id] = Entry(key: key, priority: priority(), order: order, waiting: continuation)
                    state.entryOfKey[key] = id
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

    /// Asks the download of `key` (queued or running) for its level again: a changed level moves it to
    /// its place in the other queue or in its own (prioritized scheduling), or relabels it while it runs.
    func refreshLane(of key: DataKey, _ priority: () -> FetchPriority) {
        let started = state.withLock { state -> [CheckedContinuation<Void, any Error>]? in
            guard let id = state.entryOfKey[key], var entry = state.entries[id] else { return nil }
            let wanted = priority()
            guard wanted != entry.priority else { return nil }
            let wasUrgent = entry.isUrgent
            entry.priority = wanted
            if scheduling == .prioritized, entry.isUrgent != wasUrgent {
                if entry.isUrgent {
                    state.lastOrder += 1
                    entry.order = state.lastOrder
                } else {
                    state.frontOrder -= 1
                    entry.order = state.frontOrder
                }
            }
            state.entries[id] = entry
            if entry.waiting != nil, scheduling == .prioritized {
                // Out of the queue it was in, into its place by level and order.
                dequeue(id, urgent: wasUrgent, in: &state)
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
                if entry.isUrgent { urgentRunning.insert(entry.key.url) } else { slowRunning.insert(entry.key.url) }
            }
            return (urgentRunning, slowRunning, state.urgentQueue.map { state.entries[$0]!.key.url },
                    state.slowQueue.map { state.entries[$0]!.key.url })
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
        if entry.waiting != nil { dequeue(id, urgent: entry.isUrgent, in: &state) }
        if state.entryOfKey[entry.key] == id { state.entryOfKey[entry.key] = nil }
    }

    /// Inserts `id` into its lane's queue: by level, then by order (by order alone in `fifo` scheduling).
    private func enqueue(_ id: Int, in state: inout State) {
        let entry = state.entries[id]!
        let fifo = scheduling == .fifo
        /// Whether `other` starts before the entry being queued.
        func startsBefore(_ other: Entry) -> Bool {
            if !fifo, other.priority != entry.priority { return other.priority > entry.priority }
            return other.order <= entry.order
        }
        func insert(into queue: inout [Int]) {
            var index = queue.count
            while index > 0, !startsBefore(state.entries[queue[index - 1]]!) { index -= 1 }
            queue.insert(id, at: index)
        }
        if fifo || entry.isUrgent { insert(into: &state.urgentQueue) } else { insert(into: &state.slowQueue) }
    }

    /// Takes `id` out of the urgent or the slow queue.
    private func dequeue(_ id: Int, urgent: Bool, in state: inout State) {
        if scheduling == .fifo || urgent { state.urgentQueue.removeAll { $0 == id } } else { state.slowQueue.removeAll { $0 == id } }
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
        func count(urgent: Bool) -> Int { state.running.count { state.entries[$0]?.isUrgent == urgent } }
        if scheduling == .fifo {
            while state.running.count < urgentWidth, !state.urgentQueue.isEmpty { start(state.urgentQueue.removeFirst()) }
        } else {
            while count(urgent: true) < urgentWidth, !state.urgentQueue.isEmpty { start(state.urgentQueue.removeFirst()) }
            if count(urgent: true) == 0, state.urgentQueue.isEmpty, count(urgent: false) == 0, !state.slowQueue.isEmpty {
                start(state.slowQueue.removeFirst())
            }
        }
        return started
    }
}
