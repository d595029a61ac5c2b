// TesseraStress: the writer half of the image table crash test.
//
//   TesseraStress --dir D [--seed S] [--count N] [--every K]
//   TesseraStress --dir D --bench N      (open time and hit latency with N entries; use -c release)
//
// Opens a 64×64 bgra32 table "stress" (maximumCount 40) in D and performs N operations (0 = until
// killed) on 100 entity ids: mostly stores, some lookups and deletes. Every stored image's pixels
// are a pure function of (entity id, source id), and every source id encodes its entity, so a
// verifier can recompute any entry exactly (see `StressPattern`). Prints "ready" once the table is
// open, "progress <n>" before every K-th store, "done" at the end; exits 3 if the table is locked,
// 2 on a wrong hit.
import Foundation
import Tessera

enum StressPattern {
    static let format = ImageFormat(name: "stress", family: "stress", style: .bgra32,
                                    size: PixelSize(width: 64, height: 64), maximumCount: 40)
    static let entityCount = 100

    static func entityID(_ k: Int) -> UUID {
        UUID(uuid: (0x7E, 0x57, UInt8(k & 0xFF), UInt8(k >> 8 & 0xFF), 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
    }

    static func sourceID(entity k: Int, serial n: UInt64) -> UUID {
        let b = withUnsafeBytes(of: n.littleEndian) { Array($0) }
        return UUID(uuid: (0x50, 0x43, UInt8(k & 0xFF), UInt8(k >> 8 & 0xFF), b[0], b[1], 0x40 | (b[2] & 0x0F), b[3],
                           0x80 | (b[4] & 0x3F), b[5], b[6], b[7], 0, 0, 0, 2))
    }

    static func fill(_ view: MutableBitmapView, entity: UUID, source: UUID) {
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for byte in withUnsafeBytes(of: entity.uuid, { Array($0) }) + withUnsafeBytes(of: source.uuid, { Array($0) }) {
            seed = (seed ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        let words = view.layout.byteCount / 8
        let p = view.baseAddress.assumingMemoryBound(to: UInt64.self)
        for i in 0..<words {
            var z = seed &+ UInt64(i) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            p[i] = z ^ (z >> 31)
        }
    }
}

func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

var options: [String: String] = [:]
var args = CommandLine.arguments.dropFirst().makeIterator()
while let key = args.next() {
    guard key.hasPrefix("--"), let value = args.next() else { say("usage: TesseraStress --dir D [--seed S] [--count N] [--every K]"); exit(64) }
    options[String(key.dropFirst(2))] = value
}
guard let dir = options["dir"] else { say("missing --dir"); exit(64) }
if let n = options["bench"].flatMap(Int.init) { runBenchmark(directory: dir, entries: n); exit(0) }
var rng = UInt64(options["seed"] ?? "1") ?? 1
let count = Int(options["count"] ?? "0") ?? 0
let every = max(1, Int(options["every"] ?? "20") ?? 20)

@MainActor func random(_ n: Int) -> Int {
    rng = rng &+ 0x9E37_79B9_7F4A_7C15
    var z = rng
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return Int((z ^ (z >> 31)) % UInt64(n))
}

let table: ImageTable
do {
    table = try ImageTable(format: StressPattern.format, directory: URL(fileURLWithPath: dir, isDirectory: true))
} catch {
    if case .storage(.locked) = error.reason { say("locked"); exit(3) }
    say("error \(error)"); exit(1)
}
say("ready")
var serial = UInt64(Date().timeIntervalSince1970 * 1000) << 16   // distinct across runs
var stores = 0
var operation = 0
while count == 0 || operation < count {
    operation += 1
    let k = random(StressPattern.entityCount)
    let entity = StressPattern.entityID(k)
    switch random(10) {
    case 0:
        table.delete(entityID: entity)
    case 1, 2:
        if let image = table.image(for: entity) {
            let expected = Bitmap(layout: image.layout) { StressPattern.fill($0, entity: entity, source: image.sourceID) }
            if !image.hasSamePixels(as: expected) { say("wrong pixels for \(entity)"); exit(2) }
        }
    default:
        serial += 1
        let source = StressPattern.sourceID(entity: k, serial: serial)
        stores += 1
        // Announce the store *before* making it, so a parent that kills on reading this line
        // tends to land inside the store (mostly inside the drawing closure).
        if stores % every == 0 { say("progress \(stores)") }
        try table.store(entityID: entity, sourceID: source) { StressPattern.fill($0, entity: entity, source: source) }
    }
}
say("done")

/// Fills an 8×8 gray8 table with `entries` entries, then times reopening it and hits.
func runBenchmark(directory: String, entries: Int) {
    let format = ImageFormat(name: "bench", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: entries)
    let url = URL(fileURLWithPath: directory, isDirectory: true)
    let ids = (0..<entries).map { _ in UUID() }
    let clock = ContinuousClock()
    do {
        let table = try! ImageTable(format: format, directory: url)
        let t = clock.measure {
            for (i, id) in ids.enumerated() { try! table.store(entityID: id, sourceID: id) { $0.baseAddress.storeBytes(of: UInt8(truncatingIfNeeded: i), as: UInt8.self) } }
        }
        say("store: \(t / entries) per entry (\(entries) entries)")
    }
    var table: ImageTable?
    let open = clock.measure { table = try! ImageTable(format: format, directory: url) }
    say("open with \(entries) entries: \(open)")
    let hot = Array(ids.prefix(1000))
    for id in hot { _ = table!.image(for: id) }   // first reads verify checksums
    let rounds = 1_000_000
    var hits = 0
    let t = clock.measure {
        for i in 0..<rounds where table!.image(for: hot[i % hot.count], sourceID: hot[i % hot.count]) != nil { hits += 1 }
    }
    say("hit (verified, with lease and fstat): \(t / rounds) each, \(hits) hits")
    let c = clock.measure { for i in 0..<rounds where table!.contains(entityID: hot[i % hot.count]) { hits += 1 } }
    say("contains: \(c / rounds) each")
    let v = clock.measure { _ = table!.verify() }
    say("verify all: \(v)")
}
