import Foundation
import NIOCore
import Testing
@_spi(Internal) import TesseraImaging
@testable import TesseraServer
import TesseraTestSupport

/// The server's keyed task pool: one job per key, callers joining it, each leaving at its own deadline
/// while the job goes on for the others, and the job cancelled once nobody waits.
@Suite("WorkPool: coalescing with per-caller deadlines")
struct WorkPoolTests {
    /// A gate the work waits on (ignoring cancellation, as a running decode does), with signals that the
    /// work started and that its task was cancelled.
    final class Gate: Sendable {
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let (cancelled, cancelledContinuation) = AsyncStream<Void>.makeStream()
        private let state = LockedValue<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

        func work(_ value: Int) async -> Int {
            startedContinuation.yield()
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = state.withLock { state -> Bool in
                        if state.open { return true }
                        state.waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                cancelledContinuation.yield()
            }
            return value
        }

        func open() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.open = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }

        func waitUntilStarted() async { for await _ in started { break } }
        func waitUntilCancelled() async { for await _ in cancelled { break } }
    }

    @Test func aCallerLeavesAtItsDeadlineWhileTheJobGoesOnForAnother() async throws {
        let pool = WorkPool<Int>()
        let gate = Gate()
        let patient = Task { try await pool.value(for: "k", deadline: nil) { await gate.work(7) } }
        await gate.waitUntilStarted()
        // A second caller joins the running job and leaves at its deadline, answered at once.
        let impatient = await #expect(throws: ServiceError.self) {
            try await pool.value(for: "k", deadline: ContinuousClock.now + .milliseconds(20)) { Issue.record("a second job started"); return 0 }
        }
        #expect(impatient?.code == .timeout)
        #expect(pool.jobCount == 1)
        gate.open()
        let outcome = try await patient.value
        #expect(outcome.value == 7)
        #expect(!outcome.joined)
        #expect(pool.jobCount == 0)
    }

    @Test func joinersShareOneJobAndSayTheyJoined() async throws {
        let pool = WorkPool<Int>()
        let gate = Gate()
        let first = Task { try await pool.value(for: "k", deadline: nil) { await gate.work(1) } }
        await gate.waitUntilStarted()
        let second = Task { try await pool.value(for: "k", deadline: nil) { Issue.record("a second job started"); return 2 } }
        while pool.waiterCount(for: "k") < 2 { await Task.yield() }
        gate.open()
        let (a, b) = (try await first.value, try await second.value)
        #expect(a.value == 1 && b.value == 1)
        #expect(!a.joined && b.joined)
    }

    @Test func theJobIsCancelledWhenItsLastCallerLeaves() async throws {
        let pool = WorkPool<Int>()
        let gate = Gate()
        let only = await #expect(throws: ServiceError.self) {
            try await pool.value(for: "k", deadline: ContinuousClock.now + .milliseconds(20)) { await gate.work(3) }
        }
        #expect(only?.code == .timeout)
        await gate.waitUntilCancelled()   // the job's task saw its cancellation
        gate.open()
        while pool.jobCount > 0 { await Task.yield() }
        // A new caller starts the work again.
        let again = try await pool.value(for: "k", deadline: nil) { 4 }
        #expect(again.value == 4)
    }

    @Test func aCallerJoiningAnAbandonedJobThatEndsCancelledStartsItAgain() async throws {
        let pool = WorkPool<Int>()
        let gate = Gate()
        _ = await #expect(throws: ServiceError.self) {
            try await pool.value(for: "k", deadline: ContinuousClock.now + .milliseconds(20)) {
                _ = await gate.work(0)
                try Task.checkCancellation()   // abandoned: ends cancelled
                return 0
            }
        }
        await gate.waitUntilCancelled()
        // The abandoned job is still registered: this caller joins it, and when it ends cancelled, starts anew.
        let joiner = Task { try await pool.value(for: "k", deadline: nil) { 5 } }
        while pool.waiterCount(for: "k") < 1 { await Task.yield() }
        gate.open()
        #expect(try await joiner.value.value == 5)
    }
}
