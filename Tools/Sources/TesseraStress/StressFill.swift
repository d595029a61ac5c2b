import Foundation
import Tessera
import TesseraTestSupport

/// `TesseraStress --fill --dir D [--rlimit]`: stores entries until the file system refuses (a full
/// disk: `ENOSPC`; with `--rlimit`, `RLIMIT_FSIZE` set to the file's size after the first chunk:
/// `EFBIG`, which works without privileges and also as root), then checks that the failure was a
/// typed `.io` error and that everything stored before is intact: every entry reads back exactly,
/// ``ImageTable/verify()`` is clean, a delete frees space for one more store, and all of it
/// survives reopening. Prints `fill stored=N error=... ok` and exits 0, or exits 2.
struct StressFill {
    let directory: URL
    let useRLimit: Bool

    /// 256×256 bgra32: 256 KiB per entry, so the file grows 8 entries at a time.
    static let format = ImageFormat(name: "fill", style: .bgra32, size: PixelSize(width: 256, height: 256), maximumCount: 64)

    func run() -> Bool {
        signal(SIGXFSZ, SIG_IGN)   // past RLIMIT_FSIZE: EFBIG instead of a signal
        var stored: [UUID] = []
        var failure: TesseraError?
        do {
            let table = try ImageTable(format: Self.format, directory: directory)
            for k in 0..<Self.format.maximumCount {
                if useRLimit && k == 8 {
                    var limit = rlimit(rlim_cur: rlim_t(table.usage.fileSize), rlim_max: rlim_t.max)   // RLIM_INFINITY
                    setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &limit)
                }
                let id = StressPattern.entityID(k), source = StressPattern.sourceID(entity: k, serial: 1)
                do {
                    try table.store(entityID: id, sourceID: source) { StressPattern.fill($0, entity: id, source: source) }
                    stored.append(id)
                } catch {
                    failure = error as? TesseraError
                    say("store \(k) failed: \(error)")
                    break
                }
            }
            guard let failure, case .io(_, _, let code) = failure.reason, code == ENOSPC || code == EFBIG else {
                say("fill: expected a typed ENOSPC/EFBIG error, got \(failure.map { "\($0)" } ?? "none")")
                return false
            }
            guard check(table, stored, "after the failed store") else { return false }
            if let first = stored.first {   // deleting frees a slot whose blocks exist: the next store fits
                table.delete(entityID: first)
                stored.removeFirst()
                let id = StressPattern.entityID(1000), source = StressPattern.sourceID(entity: 1000, serial: 1)
                try table.store(entityID: id, sourceID: source) { StressPattern.fill($0, entity: id, source: source) }
                stored.append(id)
                guard check(table, stored, "after delete and store") else { return false }
            }
        } catch {
            say("fill: unexpected error \(error)")
            return false
        }
        do {
            let reopened = try ImageTable(format: Self.format, directory: directory)
            guard check(reopened, stored, "after reopening") else { return false }
        } catch {
            say("fill: reopening failed: \(error)")
            return false
        }
        say("fill stored=\(stored.count) error=\(failure!) ok")
        return true
    }

    private func check(_ table: ImageTable, _ ids: [UUID], _ when: String) -> Bool {
        for id in ids {
            guard let image = table.image(for: id), StressPattern.isExact(image) else { say("fill: \(id) lost or wrong \(when)"); return false }
        }
        let report = table.verify()
        guard report.isClean, table.usage.entryCount == ids.count else { say("fill: \(report), \(table.usage.entryCount) entries \(when)"); return false }
        return true
    }
}
