#if Serving
import Foundation
import NIOCore
@_spi(Internal) import TesseraImaging
import Tessera

/// A refused or failed request: its HTTP status and a short machine-readable code for the JSON body.
public struct ServiceError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// A short code (`path_escape`, `bad_signature`, `source_too_large`…), documented in docs/SERVING.md.
    public let code: String
    /// A sentence for people.
    public let message: String

    /// Creates an error answered with HTTP `status`, the JSON body's `code` and a `message` for people.
    public init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// `STATUS CODE: MESSAGE`, as logged.
    public var description: String { "\(status) \(code): \(message)" }

    /// `{"error":"code","message":"…"}`.
    public var jsonBody: [UInt8] {
        let object = ["error": code, "message": message]
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map { Array($0) } ?? Array("{}".utf8)
    }

    /// Maps an error from the library (possibly wrapped) to a status.
    static func from(_ error: any Error) -> ServiceError {
        var current: (any Error)? = error
        while let error = current {
            if let service = error as? ServiceError { return service }
            if let refusal = error as? RemoteRefusal { return ServiceError(403, "remote_refused", refusal.message) }
            if error is CancellationError { return ServiceError(503, "cancelled", "the request was cancelled") }
            guard let tessera = error as? TesseraError else { break }
            switch tessera.reason {
            case .decoding(.inputTooLarge(let bytes, let limit)):
                return ServiceError(413, "source_too_large", "the source has \(bytes) bytes, more than the limit of \(limit)")
            case .decoding(.tooManyPixels(let w, let h, let limit)):
                return ServiceError(413, "source_too_many_pixels", "the source is \(w)x\(h), more than \(limit) pixels")
            case .decoding(.tooManyItems(let count, let limit)):
                return ServiceError(413, "source_too_many_items", "the source declares \(count) items, more than \(limit)")
            case .decoding(.unsupportedFormat), .decoding(.empty), .decoding(.truncated), .decoding(.invalidDimensions), .decoding(.codec):
                return ServiceError(415, "undecodable_source", "the source is not an image that can be decoded")
            case .fetching(.tooLarge(let bytes, let limit, _)):
                return ServiceError(413, "source_too_large", "the source has \(bytes) bytes, more than the limit of \(limit)")
            case .fetching(.timeout):
                return ServiceError(504, "upstream_timeout", "the remote source did not answer in time")
            case .fetching(.httpStatus(let code, _)):
                return ServiceError(502, "upstream_status", "the remote source answered \(code)")
            case .fetching(.redirectLimit):
                return ServiceError(502, "upstream_redirects", "the remote source redirected too often")
            case .fetching:
                if let underlying = tessera.underlying { current = underlying; continue }
                return ServiceError(502, "upstream_failed", "the remote source could not be loaded")
            case .storage(.allEntriesInUse):
                return ServiceError(503, "busy", "every table entry is in use; try again")
            case .cancelled:
                return ServiceError(503, "cancelled", "the request was cancelled")
            default:
                if let underlying = tessera.underlying { current = underlying; continue }
                return ServiceError(500, "internal", "the image could not be produced")
            }
        }
        return ServiceError(500, "internal", "the image could not be produced")
    }
}

/// Bounds the decodes running at once: up to `limit` run, up to `queueLimit` wait in arrival order, and
/// beyond that a request is refused with 503 at once (memory stays bounded under any load).
final class DecodeSlots: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextID = 0
        var counts: (running: Int, waiting: Int) { (running, waiting.count) }
    }

    private let limit: Int
    private let queueLimit: Int
    private let state = LockedValue(State())
    /// Told the running and waiting counts after each change (the service exports them as gauges).
    private let report: @Sendable (_ running: Int, _ waiting: Int) -> Void

    init(limit: Int, queueLimit: Int, report: @escaping @Sendable (_ running: Int, _ waiting: Int) -> Void = { _, _ in }) {
        self.limit = limit
        self.queueLimit = queueLimit
        self.report = report
    }

    /// Runs `body` in a slot.
    func run<R>(_ body: () async throws -> R) async throws -> R {
        try await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async throws {
        enum Decision { case run, wait(Int), refuse }
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (decision, counts) = state.withLock { state -> (Decision, (running: Int, waiting: Int)) in
                    let decision: Decision
                    if state.running < limit {
                        state.running += 1
                        decision = .run
                    } else if state.waiting.count < queueLimit {
                        state.waiting.append((id, continuation))
                        decision = .wait(id)
                    } else {
                        decision = .refuse
                    }
                    return (decision, state.counts)
                }
                report(counts.running, counts.waiting)
                switch decision {
                case .run: continuation.resume()
                case .wait: break
                case .refuse: continuation.resume(throwing: ServiceError(503, "too_many_decodes", "too many images are being decoded; try again"))
                }
            }
        } onCancel: {
            let removed = state.withLock { state -> (CheckedContinuation<Void, any Error>, (running: Int, waiting: Int))? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return (state.waiting.remove(at: index).continuation, state.counts)
            }
            guard let (continuation, counts) = removed else { return }
            report(counts.running, counts.waiting)
            continuation.resume(throwing: CancellationError())
        }
    }

    private func release() {
        let (next, counts) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, (running: Int, waiting: Int)) in
            if state.waiting.isEmpty {
                state.running -= 1
                return (nil, state.counts)
            }
            return (state.waiting.removeFirst().continuation, state.counts)   // the slot passes to the next waiter
        }
        report(counts.running, counts.waiting)
        next?.resume()
    }

    /// Decodes running now.
    var running: Int { state.withLock { $0.running } }
    /// Requests waiting for a slot.
    var waitingCount: Int { state.withLock { $0.waiting.count } }
}

/// A bounded in-memory LRU of encoded responses, by byte size (on the library's one LRU list).
final class ResponseCache: Sendable {
    struct Entry: Sendable {
        /// Encoded once; every hit shares this storage.
        var body: ByteBuffer
        /// What the entry holds in memory: a `ByteBuffer`'s storage is the body's size rounded up to a
        /// power of two, and that is what the cache's capacity counts.
        var bytes: Int { body.capacity }
        var contentType: String
        var etag: String
    }

    private struct State {
        var slots: [String: Int] = [:]
        var entries: [(key: String, entry: Entry)?] = []
        var free: [Int] = []
        var recency = RecencyList()
        var bytes = 0
    }

    private let capacity: Int
    private let state = LockedValue(State())

    init(capacityBytes: Int) { capacity = capacityBytes }

    func get(_ key: String) -> Entry? {
        state.withLock { state in
            guard let slot = state.slots[key], let entry = state.entries[slot] else { return nil }
            state.recency.remove(slot)
            state.recency.pushFront(slot)
            return entry.entry
        }
    }

    func set(_ key: String, _ entry: Entry) {
        guard entry.bytes <= capacity / 4 else { return }   // one response never takes most of the cache
        state.withLock { state in
            if let slot = state.slots[key], let old = state.entries[slot] {
                state.bytes -= old.entry.bytes
                state.entries[slot] = (key, entry)
                state.bytes += entry.bytes
                state.recency.remove(slot)
                state.recency.pushFront(slot)
            } else {
                let slot: Int
                if let reused = state.free.popLast() { slot = reused } else {
                    slot = state.entries.count
                    state.entries.append(nil)
                    state.recency.resize(to: state.entries.count)
                }
                state.entries[slot] = (key, entry)
                state.slots[key] = slot
                state.bytes += entry.bytes
                state.recency.pushFront(slot)
            }
            while state.bytes > capacity, let victim = state.recency.leastRecent {
                state.recency.remove(victim)
                if let old = state.entries[victim] {
                    state.bytes -= old.entry.bytes
                    state.slots[old.key] = nil
                }
                state.entries[victim] = nil
                state.free.append(victim)
            }
        }
    }

    var byteCount: Int { state.withLock { $0.bytes } }
}

/// Coalesces identical ad-hoc work (same output key) on the library's one coalescing engine: the first
/// caller starts the job, later callers wait for its result.
final class ResultCoalescer<Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value, any Error>
    private let jobs = LockedValue(CoalescingJobs<String, Waiter, Void>())

    func value(for key: String, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: Waiter) in
            let start = jobs.withLock { jobs -> Int? in
                let waiterID = jobs.makeID()
                var jobID: Int?
                if jobs[key] == nil { jobID = jobs.startJob(for: key, extra: ()) }
                jobs.addWaiter(continuation, id: waiterID, to: key)
                return jobID
            }
            guard let jobID = start else { return }
            let task = Task.detached {
                let result: Result<Value, any Error>
                do { result = .success(try await work()) } catch { result = .failure(error) }
                let waiters = self.jobs.withLock { jobs -> [Waiter] in
                    guard let job = jobs.removeJob(key, jobID: jobID) else { return [] }
                    return Array(job.waiters.values)
                }
                for waiter in waiters { waiter.resume(with: result) }
            }
            jobs.withLock { jobs in
                if var job = jobs[key], job.id == jobID {
                    job.task = task
                    jobs[key] = job
                }
            }
        }
    }
}
#endif
