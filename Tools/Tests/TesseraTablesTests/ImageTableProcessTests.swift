import Foundation
import Testing
@testable import TesseraImaging
@_spi(Internal) @testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("Image table across processes and threads")
struct ImageTableProcessTests {
    typealias P = TablePattern

    /// Opens the stress table and checks every entry against the recomputed pattern.
    private func checkStressTable(_ dir: URL, context: String) throws -> Int {
        let table = try ImageTable(format: StressPattern.format, directory: dir)
        let entries = table.entries()
        #expect(entries.count <= StressPattern.format.maximumCount, "\(context)")
        #expect(Set(entries.map(\.slot)).count == entries.count)
        for entry in entries {
            let image = try #require(table.image(for: entry.entityID), "\(context): listed entry \(entry.entityID) missing")
            #expect(StressPattern.entityIndex(entry.entityID) != nil, "\(context)")
            #expect(StressPattern.sourceEntityIndex(image.sourceID) == StressPattern.entityIndex(entry.entityID), "\(context)")
            #expect(P.isExact(image), "\(context): wrong pixels for \(entry.entityID)")
        }
        let report = table.verify()
        #expect(report.isClean, "\(context): \(report)")
        return entries.count
    }

    @Test("another process writes, this one reads the same pixels")
    func crossProcess() throws {
        let dir = TemporaryDirectory()
        let child = try StressChild(directory: dir.url, seed: 7, count: 500, every: 50)
        #expect(child.readLine() == "ready")
        #expect(child.finish() == 0)
        let count = try checkStressTable(dir.url, context: "after a clean exit")
        #expect(count > 20)
    }

    @Test("a table open here is locked for another process")
    func crossProcessLock() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: StressPattern.format, directory: dir.url)
        let child = try StressChild(directory: dir.url, seed: 1, count: 10)
        #expect(child.readLine() == "locked")
        #expect(child.finish() == 3)
        _ = table
    }

    @Test("SIGKILL at random points never leaves a torn or wrong entry")
    func crashSafety() throws {
        let dir = TemporaryDirectory()
        var rng = SystemRandomNumberGenerator()
        var sawEntries = 0
        for round in 0..<24 {
            let child = try StressChild(directory: dir.url, seed: rng.next(), every: 7)
            #expect(child.readLine() == "ready", "round \(round)")
            let lines = Int.random(in: 1...12, using: &rng)
            for _ in 0..<lines { #expect(child.readLine()?.hasPrefix("progress") == true) }
            for _ in 0..<Int.random(in: 0...2, using: &rng) { sched_yield() }   // vary the kill's phase
            child.kill()
            #expect(child.exit?.signal == SIGKILL,
                    "round \(round): the writer must die by SIGKILL, not exit")
            sawEntries = max(sawEntries, try checkStressTable(dir.url, context: "round \(round) after \(lines) lines"))
        }
        #expect(sawEntries > 0)
    }

    /// The crash test's parallel writer (4 threads storing into one table) SIGKILLed 10 times; after
    /// each kill `TesseraStress --parallel-verify` must pass: exact pixels, no stale entry, the count
    /// limit, no more entries missing than the interrupted stores explain, and a clean verify.
    @Test("SIGKILL during parallel stores from 4 threads never leaves a torn, stale or extra entry")
    func parallelCrashSafety() throws {
        let dir = TemporaryDirectory()
        let journal = dir.url.appendingPathComponent("journal").path
        let tables = dir.url.appendingPathComponent("tables").path
        var rng = SystemRandomNumberGenerator()
        var lines: [String] = []
        for round in 0..<10 {
            let child = try StressChild(arguments: ["--parallel", "--dir", tables, "--threads", "4", "--journal", journal,
                                                    "--seed", String(rng.next() as UInt32), "--every", "5"])
            #expect(child.readLine() == "ready", "round \(round)")
            for _ in 0..<Int.random(in: 1...8, using: &rng) { #expect(child.readLine()?.hasPrefix("progress") == true) }
            child.kill()
            #expect(child.exit?.signal != nil, "round \(round): killed, not exited")
            let verifier = try StressChild(arguments: ["--parallel-verify", "--dir", tables, "--threads", "4", "--journal", journal])
            let output = verifier.allLines()
            #expect(verifier.finish() == 0, "round \(round): \(output)")
            lines += output
        }
        #expect(lines.count >= 10 && lines.allSatisfy { $0.hasPrefix("parallel-verify") })
        #expect(lines.contains { !$0.contains(" present=0 ") }, "the table held entries")
    }

    @Test("concurrent stores, reads and deletes only ever return exact pixels")
    func concurrency() async throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: P.format(count: 16), directory: dir.url)
        let wrong = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var rng = SystemRandomNumberGenerator()
                    var wrong = 0
                    var held: [TableImage] = []
                    for i in 0..<400 {
                        let entity = P.id(Int.random(in: 0..<24, using: &rng))
                        switch Int.random(in: 0..<10, using: &rng) {
                        case 0: table.delete(entityID: entity)
                        case 1...4:
                            if let image = table.image(for: entity) {
                                if !P.isExact(image) || image.entityID != entity { wrong += 1 }
                                if held.count < 2 { held.append(image) } else { held[i % 2] = image }
                            }
                        default:
                            let source = P.id(worker << 12 | i, kind: 0x51)
                            do {
                                let image = try P.store(table, entity, source)
                                if !P.isExact(image) { wrong += 1 }
                            } catch {
                                wrong += 1   // 16 slots, at most 4 × 3 live: never all in use
                            }
                        }
                    }
                    for image in held where !P.isExact(image) { wrong += 1 }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        #expect(table.usage.entryCount <= 16)
        #expect(table.verify().isClean)
        for entity in table.entityIDs { #expect(P.isExact(try #require(table.image(for: entity)))) }
    }
}
