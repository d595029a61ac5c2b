import Foundation
import Testing
@_spi(Internal) @testable import TesseraCore
import TesseraTesting
import TesseraTestSupport

/// The one keyed task pool on its own: joining, the last waiter leaving, deadlines (its users' tests cover
/// holds and batches). Gates (`LoadGate`) hold jobs; nothing sleeps.
@Suite("TaskPool")
struct TaskPoolTests {
    @Test("callers of one key share one run and say whether they joined")
    func joining() async throws {
        let pool = TaskPool<String, Int, Int>()
        let gate = LoadGate(), runs = LockedValue(0)
        async let first = pool.value(for: "k", request: 1) { runs.withLock { $0 += 1 }; try await gate.wait(); return 42 }
        async let second = pool.value(for: "k", request: 2) { runs.withLock { $0 += 1 }; return -1 }
        while pool.waiterCount(for: "k") < 2 { await Task.yield() }
        gate.open()
        let outcomes = try await [first, second]
        #expect(outcomes.map(\.value) == [42, 42])
        #expect(outcomes.filter(\.joined).count == 1)
        #expect(runs.withLock { $0 } == 1)
        #expect(!pool.hasJob("k"))
    }

    @Test("the last waiter leaving cancels the run and calls onAbandon once")
    func abandoning() async throws {
        let abandoned = LockedValue<[String]>([])
        let pool = TaskPool<String, Int, Int>(onAbandon: { key in abandoned.withLock { $0.append(key) } })
        let gate = LoadGate(), cancelledRun = LockedValue(false)
        let task = Task {
            try await pool.value(for: "k", request: 1) {
                do { try await gate.wait() } catch { cancelledRun.withLock { $0 = true }; throw error }
                return 1
            }
        }
        while pool.waiterCount(for: "k") < 1 { await Task.yield() }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        while !cancelledRun.withLock({ $0 }) { await Task.yield() }
        #expect(abandoned.withLock { $0 } == ["k"])
        #expect(!gate.isOpen)
    }

    @Test("a caller's deadline ends its own wait; the others still get the value")
    func deadlines() async throws {
        let pool = TaskPool<String, Int, Int>()
        let gate = LoadGate()
        async let patient = pool.value(for: "k", request: 1) { try await gate.wait(); return 7 }
        while pool.waiterCount(for: "k") < 1 { await Task.yield() }
        await #expect(throws: TaskPool<String, Int, Int>.DeadlineExceeded.self) {
            _ = try await pool.value(for: "k", request: 2, deadline: .now) { -1 }
        }
        gate.open()
        #expect(try await patient.value == 7)
    }
}
