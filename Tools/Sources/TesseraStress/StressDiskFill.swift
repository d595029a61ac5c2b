import Foundation
import Tessera

/// `TesseraStress --disk-fill --disk-cache C`: the disk cache when the file system refuses to write.
/// Stores 8 entries, then sets `RLIMIT_FSIZE` below the next body's size (as a full disk would refuse
/// it; works without privileges and as root) and tries to store a new entry and to replace an existing
/// one. Both must fail with a typed `.io` error (`EFBIG`); every earlier entry must still read back
/// exactly (the replaced one with its old bytes), no temporary file may remain, and all of it must
/// survive reopening. Prints `disk-fill stored=8 error=... ok` and exits 0, or exits 2.
struct StressDiskFill {
    let directory: URL

    func run() async -> Bool {
        signal(SIGXFSZ, SIG_IGN)   // past RLIMIT_FSIZE: EFBIG instead of a signal
        let configuration = StressDiskPattern.configuration(directory)
        var failures: [TesseraError] = []
        do {
            let cache = try DiskCache(configuration: configuration)
            for k in 0..<8 { try await cache.store(StressDiskPattern.body(k, serial: 1), info: StressDiskPattern.info(k, now: Date()), for: StressDiskPattern.url(k)) }
            var limit = rlimit(rlim_cur: 256, rlim_max: rlim_t.max)   // smaller than any body: every write fails
            setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
            for (k, serial) in [(8, UInt64(1)), (3, UInt64(2))] {
                do {
                    try await cache.store(StressDiskPattern.body(k, serial: serial), info: StressDiskPattern.info(k, now: Date()),
                                          for: StressDiskPattern.url(k))
                    say("disk-fill: storing key \(k) did not fail")
                    return false
                } catch {   // the store's typed error: a TesseraError
                    guard case .io(_, _, let code) = error.reason, code == EFBIG || code == ENOSPC else {
                        say("disk-fill: expected EFBIG/ENOSPC, got \(error)"); return false
                    }
                    failures.append(error)
                }
            }
            guard await check(cache, "after the failed stores") else { return false }
        } catch {
            say("disk-fill: unexpected error \(error)")
            return false
        }
        do {
            guard await check(try DiskCache(configuration: configuration), "after reopening") else { return false }
        } catch {
            say("disk-fill: reopening failed: \(error)")
            return false
        }
        say("disk-fill stored=8 error=\(failures[0]) ok")
        return true
    }

    private func check(_ cache: DiskCache, _ when: String) async -> Bool {
        for k in 0..<9 {
            let entry = await cache.entry(for: StressDiskPattern.url(k))
            let expected = k < 8 ? StressDiskPattern.body(k, serial: 1) : nil
            guard entry?.data == expected else { say("disk-fill: key \(k) lost or wrong \(when)"); return false }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        guard names.count == 8, cache.statistics.count == 8, !names.contains(where: { $0.hasPrefix(".tmp-") }) else {
            say("disk-fill: \(names.count) files, \(cache.statistics.count) indexed \(when): \(names)")
            return false
        }
        return true
    }
}
