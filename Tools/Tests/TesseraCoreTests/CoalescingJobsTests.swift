import Testing
@testable import TesseraCore
@testable import TesseraImaging
import TesseraTestSupport

/// The one coalescing engine's bookkeeping: one job per key, waiters by id, last waiter abandons.
@Suite("coalescing jobs")
struct CoalescingJobsTests {
    typealias Jobs = CoalescingJobs<String, String, Int>

    @Test("one job per key; waiters join it, leave it by id, and are taken by what they want")
    func waiters() {
        var jobs = Jobs()
        let job = jobs.startJob(for: "a", extra: 7)
        #expect(jobs.isCurrent("a", jobID: job) && !jobs.isCurrent("a", jobID: job + 1))
        #expect(jobs["a"]?.extra == 7)
        for (id, want) in [(101, "small"), (102, "large"), (103, "small")] { jobs.addWaiter(want, id: id, to: "a") }
        #expect(jobs.removeWaiter(102)?.waiter == "large")
        #expect(jobs.removeWaiter(102) == nil, "a waiter leaves once")
        let small = jobs.takeWaiters(of: "a", jobID: job, where: { $0 == "small" })
        #expect(small.map(\.id) == [101, 103])
        #expect(jobs["a"]?.waiters.isEmpty == true)
        #expect(jobs.takeWaiters(of: "a", jobID: job + 1).isEmpty, "another job's id takes nothing")
    }

    @Test("the last waiter to leave abandons the job, unless it is committed or still wanted")
    func abandon() {
        var jobs = Jobs()
        _ = jobs.startJob(for: "a", extra: 0)
        jobs.addWaiter("w", id: 1, to: "a")
        #expect(jobs.abandonIfUnwanted("a") == nil, "a waiter still waits")
        _ = jobs.removeWaiter(1)
        #expect(jobs.abandonIfUnwanted("a", stillWanted: { $0.extra == 0 }) == nil, "the owner still wants it")
        jobs["a"]!.committed = true
        #expect(jobs.abandonIfUnwanted("a") == nil, "a committed job is never abandoned")
        jobs["a"]!.committed = false
        #expect(jobs.abandonIfUnwanted("a") != nil)
        #expect(jobs["a"] == nil)
        let next = jobs.startJob(for: "a", extra: 1)
        jobs.addWaiter("x", id: 2, to: "a")
        let removed = jobs.removeJob("a", jobID: next)
        #expect(removed?.waiters[2] == "x" && jobs.removeWaiter(2) == nil, "removing a job removes its waiters")
    }
}
