import Foundation
import Tessera

/// The writer half of the disk cache crash test (`TesseraStress --disk-cache DIR --journal J`):
/// stores, reads, revalidates and removes entries of a ``DiskCache`` until killed (or for `count`
/// operations), journalling like ``StressWriter`` (one unbuffered `write(2)` per line):
/// - `b K SERIAL` before storing key K's body with SERIAL, `c` once the store returned;
/// - `x K` before removing key K, `c` once done;
/// - `u K` before rewriting K's information (same bytes, a 304), `c` once done.
/// A read that hits must return exactly the body of a serial stored for that key (exit 2 otherwise).
struct StressDiskWriter {
    let cache: DiskCache
    var random: SplitMix
    let journal: Int32

    mutating func run(count: Int, every: Int) async throws -> Bool {
        var serial = UInt64(Date().timeIntervalSince1970 * 1000) << 16   // distinct across runs
        var stores = 0
        var operation = 0
        while count == 0 || operation < count {
            operation += 1
            let k = random.next(StressDiskPattern.keyCount)
            let url = StressDiskPattern.url(k)
            switch random.next(10) {
            case 0:
                note("x \(k)")
                await cache.remove(url)
                note("c")
            case 1:
                note("u \(k)")
                try await cache.updateInfo(StressDiskPattern.info(k, now: Date()), for: url)
                note("c")
            case 2, 3:
                if let entry = await cache.entry(for: url) {
                    guard StressDiskPattern.exactSerial(entry.data, key: k) != nil, entry.info.url == url.absoluteString else {
                        say("wrong bytes for key \(k)")
                        return false
                    }
                }
            default:
                serial += 1
                stores += 1
                if stores % every == 0 { say("progress \(stores)") }
                let body = StressDiskPattern.body(k, serial: serial)
                note("b \(k) \(serial)")
                try await cache.store(body, info: StressDiskPattern.info(k, now: Date()), for: url)
                note("c")
            }
        }
        return true
    }

    private func note(_ line: String) {
        if journal >= 0 { say(line, to: journal) }
    }
}
