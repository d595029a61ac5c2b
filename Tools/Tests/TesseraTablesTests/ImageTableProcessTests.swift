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
    private func checkStressTable(_ dir: URL, context: String, table open: ImageTable? = nil) throws -> Int {
        let table = try open ?? ImageTable(format: StressPattern.format, directory: dir)
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

    @Test("a table open here is shared with another process: each sees the other's entries, pixels exact")
    func sharedWithAnotherProcess() throws {
        let dir = TemporaryDirectory()
        let table = try ImageTable(format: StressPattern.format, directory: dir.url)
        let mine = StressPattern.entityID(0), source = StressPattern.sourceID(entity: 0, serial: 1)
        try table.store(entityID: mine, sourceID: source) { StressPattern.fill($0, entity: mine, source: source) }
        let held = try #require(table.image(for: mine))   // pinned here while the child stores
        let child = try StressChild(directory: dir.url, seed: 3, count: 200, every: 50)
        #expect(child.readLine() == "ready")
        #expect(child.finish() == 0)
        #expect(StressPattern.isExact(held), "an image held here was overwritten by the other process")
        // This instance, open all along, sees what the child left, and the child's table saw ours.
        let count = try checkStressTable(dir.url, context: "after the other process", table: table)
        #expect(count > 1)
        #expect(table.entries().contains { $0.entityID != mine })
    }

    /// Three writer processes (two threads each, lanes of one journal) store into one 40-entry table,
    /// whose entries they keep evicting from each other while they hit their own; one of them is
    /// SIGKILLed and restarted at random moments. The other two carry on without a restart (they
    /// report progress after each kill) until told to stop, having seen only exact pixels (they exit 2
    /// otherwise); after every kill,
    /// `TesseraStress --parallel-verify` (exact pixels, no stale version, the count limit, nothing
    /// lost beyond one store per lane, a clean `verify()`) must pass.
    @Test("writer processes sharing a table, one SIGKILLed again and again: nothing torn, stale or lost; the others carry on")
    func sharedCrashSafety() throws {
        let dir = TemporaryDirectory()
        let journal = dir.url.appendingPathComponent("journal").path
        let tables = dir.url.appendingPathComponent("tables").path
        var rng = SystemRandomNumberGenerator()
        let stop = dir.url.appendingPathComponent("stop").path
        func writer(lane: Int, every: Int) throws -> StressChild {
            try StressChild(arguments: ["--parallel", "--dir", tables, "--threads", "2", "--lanes", "6", "--lane", String(lane),
                                        "--journal", journal, "--seed", String(rng.next() as UInt32), "--every", String(every),
                                        "--stop-file", stop])
        }
        let survivors = try [writer(lane: 2, every: 100), writer(lane: 4, every: 100)]
        for survivor in survivors { #expect(survivor.readLine() == "ready") }
        var lines: [String] = []
        for round in 0..<5 {
            let victim = try writer(lane: 0, every: 5)
            #expect(victim.readLine() == "ready", "round \(round)")
            var refused = 0   // stores that found every slot held by a live image at that instant (allowed)
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                var line = victim.readLine()
                while line?.contains("every entry of table") == true {
                    refused += 1
                    line = victim.readLine()
                }
                #expect(line?.hasPrefix("progress") == true, "round \(round): \(line ?? "end of output")")
            }
            #expect(refused < 20, "round \(round): \(refused) stores refused")
            victim.kill()
            #expect(victim.exit?.signal != nil, "round \(round): killed, not exited")
            // The survivors go on storing after the kill: completed stores of their lanes appear in the
            // journal past its length at the kill (reading their output lets them go on printing).
            let mark = (try? FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int) ?? 0
            for (i, survivor) in survivors.enumerated() {
                let lanes = Set([2 + 2 * i, 3 + 2 * i])
                var carriedOn = false
                for _ in 0..<100_000 where !carriedOn {
                    carriedOn = completedLanes(journal, after: mark).isDisjoint(with: lanes) == false
                    if !carriedOn, survivor.readLine() == nil { break }
                }
                #expect(carriedOn, "round \(round): survivor \(i) stopped storing after the kill")
            }
            let verifier = try StressChild(arguments: ["--parallel-verify", "--dir", tables, "--threads", "6", "--journal", journal,
                                                       "--live-lanes", "2,3,4,5", "--lanes", "6"])
            let output = verifier.allLines()
            #expect(verifier.finish() == 0, "round \(round): \(output)")
            lines += output
        }
        #expect(FileManager.default.createFile(atPath: stop, contents: nil), "the stop file tells the survivors to finish")
        for (i, survivor) in survivors.enumerated() {
            let rest = survivor.allLines()
            #expect(survivor.finish() == 0, "survivor \(i) saw wrong pixels or failed: \(rest.suffix(3))")
            #expect(rest.last == "done")
        }
        #expect(lines.count >= 5 && lines.allSatisfy { $0.hasPrefix("parallel-verify") })
        #expect(lines.contains { !$0.contains(" present=0 ") }, "the table held entries")
        let table = try ImageTable(format: StressPattern.format, directory: URL(fileURLWithPath: tables))
        #expect(table.verify().isClean)
    }

    /// The lanes (entity index mod 6) with a completed store (`c K SERIAL`) past byte `offset` of the journal.
    private func completedLanes(_ journal: String, after offset: Int) -> Set<Int> {
        guard let handle = FileHandle(forReadingAtPath: journal) else { return [] }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil, let data = try? handle.read(upToCount: 1 << 16) else { return [] }
        var lanes = Set<Int>()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count == 3, f[0] == "c", let k = Int(f[1]) { lanes.insert(k % 6) }
        }
        return lanes
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
