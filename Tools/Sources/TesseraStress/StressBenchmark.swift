import Foundation
import Tessera

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
