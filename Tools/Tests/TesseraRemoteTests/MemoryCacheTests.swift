import Foundation
import Testing
@_spi(Internal) @testable import TesseraCore
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

@Suite("MemoryCache: LRU, cost and count limits, time-to-live, pressure")
struct MemoryCacheTests {
    static func bitmap(_ side: Int) throws -> Bitmap {
        Bitmap(width: side, height: side, style: .bgra32) { _ in }
    }

    static func key(_ name: String) -> ImageKey { ImageKey(url: URL(string: "http://127.0.0.1/\(name)")!) }

    @Test("count limit evicts the least recently used; a lookup counts as a use")
    func countLimit() throws {
        let cache = MemoryCache(configuration: .init(countLimit: 3))
        for name in ["a", "b", "c"] { cache.insert(try Self.bitmap(2), for: Self.key(name)) }
        #expect(cache.image(for: Self.key("a")) != nil)       // a is now the most recent
        cache.insert(try Self.bitmap(2), for: Self.key("d"))  // evicts b
        #expect(cache.keysOldestFirst == ["c", "a", "d"].map(Self.key))
        #expect(cache.image(for: Self.key("b")) == nil)
        #expect(cache.statistics.evictions == 1)
        #expect(cache.statistics.hits == 1 && cache.statistics.misses == 1)
    }

    @Test("cost limit in bytes; an image costlier than the limit is not kept")
    func costLimit() throws {
        let image = try Self.bitmap(10)
        let cost = image.layout.byteCount
        let cache = MemoryCache(configuration: .init(costLimit: cost * 2 + cost / 2, countLimit: 100))
        for name in ["a", "b", "c"] { cache.insert(image, for: Self.key(name)) }
        #expect(cache.totalCost == cost * 2)
        #expect(cache.keysOldestFirst == ["b", "c"].map(Self.key))
        cache.insert(try Self.bitmap(40), for: Self.key("huge")) // costlier than the whole limit
        #expect(cache.contains(Self.key("huge")) == false)
        #expect(cache.count == 2)
    }

    @Test("trim, removeAll and new limits")
    func trimming() throws {
        let cache = MemoryCache()
        let cost = try Self.bitmap(10).layout.byteCount
        for i in 0..<10 { cache.insert(try Self.bitmap(10), for: Self.key("\(i)")) }
        cache.trim(toCost: cost * 2 + cost / 2)
        #expect(cache.totalCost == cost * 2)
        #expect(cache.keysOldestFirst == ["8", "9"].map(Self.key))
        cache.trim(toCount: 1)
        #expect(cache.keysOldestFirst == [Self.key("9")])
        cache.insert(try Self.bitmap(10), for: Self.key("x"))
        cache.setLimits(.init(costLimit: cost, countLimit: 10))
        #expect(cache.keysOldestFirst == [Self.key("x")])
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test("time-to-live on an injected clock")
    func timeToLive() throws {
        let clock = TestClock()
        let cache = MemoryCache(configuration: .init(timeToLive: .seconds(10)), now: clock.closure)
        cache.insert(try Self.bitmap(2), for: Self.key("a"))
        clock.advance(by: 9)
        #expect(cache.image(for: Self.key("a")) != nil)
        clock.advance(by: 1)
        #expect(cache.image(for: Self.key("a")) == nil)
        #expect(cache.count == 0)
    }

    @Test("the LRU map stays consistent through a random workload")
    func lruModel() {
        var storage = LRUMap<Int, Int>()
        var model: [Int] = []                                 // oldest first
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<5000 {
            let key = Int.random(in: 0..<50, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                storage.insert(key, value: key, cost: 1)
                model.removeAll { $0 == key }; model.append(key)
            case 1:
                let found = key.isMultiple(of: 2) ? storage.touch(key) != nil : storage.touchValue(key) == key
                #expect(found == model.contains(key))
                if found { model.removeAll { $0 == key }; model.append(key) }
            case 2:
                storage.remove(key)
                model.removeAll { $0 == key }
            default:
                if let oldest = storage.removeOldest() { #expect(oldest.key == model.removeFirst()) } else { #expect(model.isEmpty) }
            }
        }
        #expect(storage.keysOldestFirst == model)
        #expect(storage.totalCost == model.count)
    }

    @Test("a prehashed key is its base: equal bases are equal keys, and a map finds each by a key made again")
    func prehashedKeys() {
        let targets = (0..<1000).map { "/v1/thumb/photo-\($0).jpg?cb=\($0 * 7)" }
        var map = LRUMap<Prehashed<String>, Int>()
        for (index, target) in targets.enumerated() { map.insert(Prehashed(target), value: index, cost: 1) }
        #expect(Prehashed("/a") == Prehashed(String("/a")) && Prehashed("/a").hashValue == Prehashed("/a").hashValue)
        #expect(Prehashed("/a") != Prehashed("/b"))
        #expect(targets.indices.allSatisfy { map.peek(Prehashed(String(targets[$0])))?.value == $0 })
        #expect(map.peek(Prehashed("/v1/thumb/photo-1.jpg")) == nil)
    }

    @Test("pressure files: memory.events and PSI parsing, levels from counter growth and stall averages")
    func pressureParsing() {
        let events = "low 0\nhigh 12\nmax 3\noom 0\noom_kill 0\n"
        #expect(MemoryPressureSample.parseEvents(events) == ["low": 0, "high": 12, "max": 3, "oom": 0, "oom_kill": 0])
        let psi = "some avg10=12.50 avg60=3.00 avg300=0.75 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=42\n"
        let parsed = MemoryPressureSample.parsePressure(psi)
        #expect(parsed["some"]?["avg10"] == 12.5)
        #expect(parsed["full"]?["total"] == 42)

        let calm = MemoryPressureSample(eventsText: events, pressureText: "some avg10=0.00 avg60=0.00 avg300=0.00 total=1\n")
        #expect(calm.level(after: nil, someThreshold: 10, fullThreshold: 5) == .normal)
        let stalled = MemoryPressureSample(eventsText: events, pressureText: psi)
        #expect(stalled.someAverage10 == 12.5)
        #expect(stalled.level(after: calm, someThreshold: 10, fullThreshold: 5) == .moderate)
        let throttled = MemoryPressureSample(eventsText: "high 13\nmax 3\n", pressureText: nil)
        #expect(throttled.level(after: calm, someThreshold: 10, fullThreshold: 5) == .moderate)
        let oom = MemoryPressureSample(eventsText: "high 13\nmax 4\n", pressureText: nil)
        #expect(oom.level(after: throttled, someThreshold: 10, fullThreshold: 5) == .critical)
        // Counters only count when they grow.
        #expect(oom.level(after: oom, someThreshold: 10, fullThreshold: 5) == .normal)
        #expect(MemoryPressureSample(eventsText: "garbage\nhigh x\n", pressureText: "nonsense").events.isEmpty)
    }

    @Test("the watcher trims by half under moderate pressure and empties the cache when critical")
    func watcher() throws {
        let directory = try temporaryDirectory("pressure")
        let eventsFile = directory.appendingPathComponent("memory.events")
        let pressureFile = directory.appendingPathComponent("memory.pressure")
        func write(high: Int, max: Int, some: Double) throws {
            try "low 0\nhigh \(high)\nmax \(max)\noom 0\noom_kill 0\n".write(to: eventsFile, atomically: true, encoding: .utf8)
            try "some avg10=\(some) avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                .write(to: pressureFile, atomically: true, encoding: .utf8)
        }
        let cache = MemoryCache()
        for i in 0..<8 { cache.insert(try Self.bitmap(10), for: Self.key("\(i)")) }
        let watcher = MemoryPressureWatcher(cache: cache, configuration: .init(eventsPath: eventsFile.path, pressurePath: pressureFile.path))
        try write(high: 0, max: 0, some: 0)
        #expect(watcher.check() == .normal)
        #expect(cache.count == 8)
        try write(high: 1, max: 0, some: 0)
        #expect(watcher.check() == .moderate)
        #expect(cache.count == 4)
        try write(high: 1, max: 0, some: 25)
        #expect(watcher.check() == .moderate)
        #expect(cache.count == 2)
        try write(high: 1, max: 1, some: 0)
        #expect(watcher.check() == .critical)
        #expect(cache.count == 0)
        // Missing files read as no pressure.
        let blind = MemoryPressureWatcher(cache: cache, configuration: .init(eventsPath: "/nonexistent/a", pressurePath: nil))
        #expect(blind.check() == .normal)
    }
}
