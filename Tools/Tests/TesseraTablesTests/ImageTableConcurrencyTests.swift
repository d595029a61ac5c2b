import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@_spi(Internal) @testable import TesseraTables
import Tessera
import TesseraTestSupport

/// Many threads storing into one table, and hits while a store is drawing. Assertions are on the
/// table's contents only, never on timings.
@Suite("image table under parallel stores")
struct ImageTableConcurrencyTests {
    typealias P = TablePattern

    /// 4 threads each store 50 distinct entities (200 in all) into one table of 24 while a fifth thread
    /// reads: every hit is byte-exact, the table never reports more than 24 entries, and at the end it
    /// holds exactly 24 byte-exact entries, verifies clean, and reopens with the same 24.
    @Test("parallel stores keep every entry exact and the count limit")
    func parallelStores() throws {
        let dir = TemporaryDirectory()
        let format = P.format(width: 48, height: 40, count: 24)
        let source = UUID(hashing: "v1")
        let writers = 4, perWriter = 50
        let failures = LockedValue<[String]>([])
        do {
            let table = try ImageTable(format: format, directory: dir.url)
            let finished = LockedValue(0)
            runThreads(writers + 1) { worker in
                if worker == writers {
                    // The reader: runs until every writer is done.
                    var round = 0
                    while finished.withLock({ $0 }) < writers {
                        let id = P.id(round % (writers * perWriter))
                        if let hit = table.image(for: id), !P.isExact(hit) { failures.withLock { $0.append("torn hit \(id)") } }
                        let count = table.usage.entryCount
                        if count > format.maximumCount { failures.withLock { $0.append("\(count) entries") } }
                        round += 1
                    }
                    return
                }
                for k in 0..<perWriter {
                    let id = P.id(worker * perWriter + k)
                    do {
                        let image = try P.store(table, id, source)
                        if !P.isExact(image) { failures.withLock { $0.append("stored image differs \(id)") } }
                    } catch {
                        failures.withLock { $0.append("store \(id): \(error)") }
                    }
                }
                finished.withLock { $0 += 1 }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(table.usage.entryCount == format.maximumCount)
            let present = (0..<writers * perWriter).compactMap { table.image(for: P.id($0), sourceID: source) }
            #expect(present.count == format.maximumCount)
            #expect(present.allSatisfy(P.isExact))
            #expect(table.verify().isClean)
        }
        let reopened = try ImageTable(format: format, directory: dir.url)
        #expect(reopened.usage.entryCount == format.maximumCount)
        let again = (0..<writers * perWriter).compactMap { reopened.image(for: P.id($0), sourceID: source) }
        #expect(again.count == format.maximumCount && again.allSatisfy(P.isExact))
    }

    /// Several threads storing the same entities: one entry per entity survives, exact, and the table
    /// verifies clean.
    @Test("racing stores of the same entities leave one exact entry each")
    func racingSameEntity() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 16)
        let table = try ImageTable(format: format, directory: dir.url)
        let sources = (0..<4).map { UUID(hashing: "source-\($0)") }
        runThreads(4) { worker in
            for round in 0..<30 {
                _ = try? P.store(table, P.id(round % 8), sources[worker])
            }
        }
        #expect(table.usage.entryCount == 8)
        for k in 0..<8 {
            let hit = try #require(table.image(for: P.id(k)))
            #expect(sources.contains(hit.sourceID) && P.isExact(hit))
        }
        #expect(table.verify().isClean)
    }

    /// A store's drawing closure waits until two other threads have each made 2,000 hits: hits never
    /// wait for a store that is drawing (if they did, the closure would wait forever and the test
    /// would fail at the 60 s safety limit). The hits are exact, and the store commits afterwards.
    @Test("hits from two threads proceed while a store is drawing")
    func hitsDuringStore() throws {
        let dir = TemporaryDirectory()
        let format = P.format(count: 32)
        let table = try ImageTable(format: format, directory: dir.url)
        let source = UUID(hashing: "v1")
        for k in 0..<16 { try P.store(table, P.id(k), source) }
        let hitsDone = DispatchSemaphore(value: 0)
        let drawing = DispatchSemaphore(value: 0)
        let results = LockedValue<[Int]>([])
        let waited = LockedValue<[DispatchTimeoutResult]>([])
        runThreads(3) { worker in
            if worker == 0 {
                _ = try? table.store(entityID: P.id(100), sourceID: source) { view in
                    drawing.signal()
                    drawing.signal()
                    for _ in 0..<2 {
                        let result = hitsDone.wait(timeout: .now() + 60)
                        waited.withLock { $0.append(result) }
                    }
                    P.fill(view, entity: P.id(100), sourceID: source)
                }
                return
            }
            drawing.wait()
            var exact = 0
            for round in 0..<2_000 {
                if let hit = table.image(for: P.id(round % 16)), P.isExact(hit) { exact += 1 }
            }
            results.withLock { $0.append(exact) }
            hitsDone.signal()
        }
        #expect(waited.withLock { $0 } == [.success, .success])
        #expect(results.withLock { $0 } == [2_000, 2_000])
        let stored = try #require(table.image(for: P.id(100)))
        #expect(P.isExact(stored))
    }
}

/// Runs `body(0..<count)` on `count` threads of their own (not a pool, so that all run at once even on
/// fewer cores) and returns when every one has exited (`pthread_join`), so nothing the bodies
/// captured is still held by a thread afterwards.
func runThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    final class Box {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }
    let threads = (0..<count).map { index -> pthread_t in
        let box = Unmanaged.passRetained(Box { body(index) }).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { raw in
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            box.run()
            return nil
        }, box)
        precondition(status == 0, "pthread_create: \(status)")
        return thread
    }
    for thread in threads { pthread_join(thread, nil) }
}

private extension TablePattern {
    static func fill(_ view: MutableBitmapView, entity: UUID, sourceID: UUID) { fill(view, entity: entity, source: sourceID) }
}
