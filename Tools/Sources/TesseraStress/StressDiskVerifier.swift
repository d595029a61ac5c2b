import Foundation
import Tessera

/// The checking half of the disk cache crash test (`TesseraStress --disk-verify --disk-cache DIR
/// --journal J`), run after every SIGKILL of ``StressDiskWriter``:
///
/// 1. Lists the directory before opening: temporary files left by the kill (`leftovers`), entry
///    files, and anything else (`foreign`: neither an entry nor a temporary file of the cache).
/// 2. Opens a ``DiskCache`` (the index is rebuilt from the files) and checks the rebuild: no
///    temporary file survives it, and the index counts exactly the entry files.
/// 3. Reads every key: a hit must be byte-identical to the body of one serial of that key (`wrong`
///    otherwise), and an entry file that gives no hit was half-written or corrupt (`torn`).
/// 4. Compares with the expected contents (`J.baseline`, what the previous verification found, plus
///    the journal's completed operations): an expected entry that is missing is **lost** unless
///    the interrupted operation removed it (`explained`); an entry with another serial than the
///    expected one or the interrupted store's is **stale**; one that should not exist is
///    **resurrected**.
/// 5. Writes the entries found as the new baseline and empties the journal.
///
/// Prints `disk-verify committed=C expected=E present=P lost=L explained=X inflight=I leftovers=T
/// foreign=F stale=S resurrected=R wrong=W torn=N index=ok|BAD` and returns false if any of
/// foreign, stale, resurrected, wrong, torn is non-zero or the index is inconsistent.
struct StressDiskVerifier {
    let directory: URL
    let journalPath: String

    var baselinePath: String { journalPath + ".baseline" }

    func run() async throws -> Bool {
        var expected: [Int: UInt64] = [:]
        for line in lines(baselinePath) {
            let f = line.split(separator: " ")
            if f.count == 2, let k = Int(f[0]), let s = UInt64(f[1]) { expected[k] = s }
        }
        var pending: (op: Character, k: Int, serial: UInt64)?
        var committed = 0
        for line in lines(journalPath) {
            let f = line.split(separator: " ")
            guard let op = f.first?.first else { continue }
            switch op {
            case "b": if f.count == 3, let k = Int(f[1]), let s = UInt64(f[2]) { pending = ("b", k, s) }
            case "x", "u": if f.count == 2, let k = Int(f[1]) { pending = (op, k, 0) }
            case "c":
                if let p = pending {
                    if p.op == "b" { expected[p.k] = p.serial; committed += 1 } else if p.op == "x" { expected[p.k] = nil }
                }
                pending = nil
            default: break   // a line cut short by the kill
            }
        }

        let before = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let leftovers = before.filter { $0.hasPrefix(".tmp-") }.count
        let entryFiles = before.filter(Self.isEntryName)
        let foreign = before.count - leftovers - entryFiles.count

        let cache = try DiskCache(configuration: StressDiskPattern.configuration(directory))
        let after = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var indexOK = !after.contains { $0.hasPrefix(".tmp-") } && cache.statistics.count == entryFiles.count
        if !indexOK { say("  index: \(cache.statistics.count) indexed, \(entryFiles.count) entry files, after open: \(after.sorted())") }

        var found: [Int: UInt64] = [:], wrong = 0
        for k in 0..<StressDiskPattern.keyCount {
            let url = StressDiskPattern.url(k)
            let indexed = cache.contains(url)
            guard let entry = await cache.entry(for: url) else { continue }
            if !indexed { indexOK = false; say("  index: key \(k) served but not indexed") }
            guard entry.info.url == url.absoluteString, let serial = StressDiskPattern.exactSerial(entry.data, key: k) else {
                wrong += 1
                say("  wrong: key \(k), \(entry.data.count) bytes")
                continue
            }
            found[k] = serial
        }
        let torn = entryFiles.count - found.count - wrong
        if cache.statistics.count != found.count + wrong { indexOK = false; say("  index: \(cache.statistics.count) after reads, \(found.count) found") }

        var lost = 0, explained = 0, stale = 0, resurrected = 0, inflight = 0
        for (k, serial) in expected {
            guard let got = found[k] else {
                if let p = pending, p.k == k, p.op == "x" { explained += 1 } else { lost += 1; say("  lost: key \(k) serial \(serial)") }
                continue
            }
            if got == serial { continue }
            if let p = pending, p.op == "b", p.k == k, got == p.serial { inflight += 1 } else { stale += 1 }
        }
        for (k, got) in found where expected[k] == nil {
            if let p = pending, p.op == "b", p.k == k, got == p.serial { inflight += 1 } else { resurrected += 1 }
        }

        let baseline = found.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
        try Data(baseline.utf8).write(to: URL(fileURLWithPath: baselinePath))
        try Data().write(to: URL(fileURLWithPath: journalPath))
        say("disk-verify committed=\(committed) expected=\(expected.count) present=\(found.count) lost=\(lost) explained=\(explained) "
            + "inflight=\(inflight) leftovers=\(leftovers) foreign=\(foreign) stale=\(stale) resurrected=\(resurrected) wrong=\(wrong) "
            + "torn=\(torn) index=\(indexOK ? "ok" : "BAD")")
        if foreign > 0 { say("  foreign files: \(before.filter { !$0.hasPrefix(".tmp-") && !Self.isEntryName($0) })") }
        return foreign == 0 && stale == 0 && resurrected == 0 && wrong == 0 && torn == 0 && indexOK
    }

    /// A cache entry's file name: 64 lower-case hex digits (the SHA-256 of its URL).
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    private func lines(_ path: String) -> [Substring] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return String(decoding: data, as: UTF8.self).split(separator: "\n")
    }
}
