// TesseraStress: crash, load and disk-full tools for image tables and the disk cache.
//
//   TesseraStress --dir D [--seed S] [--count N] [--every K] [--journal J]
//       the crash-test writer (StressWriter): N operations (0 = until killed) on 100 entity ids of a
//       64×64 bgra32 table "stress" (maximumCount 40); prints "ready", "progress <n>" before every
//       K-th store, "done"; exits 3 if the table is locked, 2 on a wrong hit.
//   TesseraStress --verify --dir D --journal J      check after a crash (StressVerifier)
//   TesseraStress --parallel --dir D --threads T --journal J [--seed S] [--count N] [--every K]   T threads storing at once
//       [--lanes L --lane T0]   as lanes T0..<T0+T of L, beside other processes on the same table and journal
//       [--stop-file F]         until F exists
//   TesseraStress --parallel-verify --dir D --threads T --journal J   check it after a crash (StressParallel)
//       [--live-lanes L0,L1 --lanes L]   while the writers of those lanes still run
//   TesseraStress --load --dir D [--seconds S | --operations N] [--tasks T]   (StressLoad)
//   TesseraStress --fill --dir D [--rlimit]         disk full / file size limit (StressFill)
//   TesseraStress --fetch-load --dir D [--seconds S | --operations N] [--tasks T]
//       ImageManager, memory and disk caches against a local origin, alongside the table load (StressFetchLoad)
//   TesseraStress --dir D --bench N                 open time and hit latency (use -c release)
//   TesseraStress --disk-cache C [--seed S] [--count N] [--every K] [--journal J]
//       the disk cache crash-test writer (StressDiskWriter): stores, reads, revalidates and removes
//       entries of 100 URLs in a DiskCache at C; prints "ready", "progress <n>", "done"; exits 2 on a wrong hit.
//   TesseraStress --disk-verify --disk-cache C --journal J   check after a crash (StressDiskVerifier)
//   TesseraStress --disk-fill --disk-cache C        writes refused (RLIMIT_FSIZE) keep entries (StressDiskFill)
import Foundation
import Tessera
import TesseraTestSupport

var options: [String: String] = [:]
var args = CommandLine.arguments.dropFirst().makeIterator()
let flags: Set<String> = ["verify", "load", "fill", "rlimit", "disk-verify", "disk-fill", "fetch-load", "parallel", "parallel-verify"]
while let key = args.next() {
    guard key.hasPrefix("--") else { say("usage: see the comment at the top of Sources/TesseraStress/main.swift"); exit(64) }
    let name = String(key.dropFirst(2))
    if flags.contains(name) { options[name] = "1"; continue }
    guard let value = args.next() else { say("missing value for \(key)"); exit(64) }
    options[name] = value
}
if let cacheDirectory = options["disk-cache"] {
    let url = URL(fileURLWithPath: cacheDirectory, isDirectory: true)
    if options["disk-fill"] != nil { exit(await StressDiskFill(directory: url).run() ? 0 : 2) }
    guard let journalPath = options["journal"] else { say("--disk-cache needs --journal"); exit(64) }
    if options["disk-verify"] != nil {
        do { exit(try await StressDiskVerifier(directory: url, journalPath: journalPath).run() ? 0 : 2) } catch { say("error \(error)"); exit(1) }
    }
    let fd = open(journalPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard fd >= 0 else { say("cannot open journal \(journalPath)"); exit(1) }
    do {
        let cache = try DiskCache(configuration: StressDiskPattern.configuration(url))
        say("ready")
        var writer = StressDiskWriter(cache: cache, random: SplitMix(state: UInt64(options["seed"] ?? "1") ?? 1), journal: fd)
        guard try await writer.run(count: Int(options["count"] ?? "0") ?? 0, every: max(1, Int(options["every"] ?? "20") ?? 20)) else { exit(2) }
    } catch {
        say("error \(error)"); exit(1)
    }
    say("done")
    exit(0)
}
guard let dir = options["dir"] else { say("missing --dir"); exit(64) }
let directory = URL(fileURLWithPath: dir, isDirectory: true)

if let n = options["bench"].flatMap(Int.init) { runBenchmark(directory: dir, entries: n); exit(0) }
if options["fill"] != nil { exit(StressFill(directory: directory, useRLimit: options["rlimit"] != nil).run() ? 0 : 2) }
if options["fetch-load"] != nil {
    let load = StressFetchLoad(directory: directory, seconds: Double(options["seconds"] ?? "0") ?? 0,
                               operationsPerTask: Int(options["operations"] ?? "300") ?? 300, tasks: Int(options["tasks"] ?? "8") ?? 8)
    do { exit(try await load.run() ? 0 : 2) } catch { say("error \(error)"); exit(1) }
}
if options["load"] != nil {
    let load = StressLoad(directory: directory, seconds: Double(options["seconds"] ?? "0") ?? 0,
                          operationsPerTask: Int(options["operations"] ?? "2000") ?? 2000, tasks: Int(options["tasks"] ?? "8") ?? 8)
    do { exit(try await load.run() ? 0 : 2) } catch { say("error \(error)"); exit(1) }
}
if options["verify"] != nil {
    guard let journal = options["journal"] else { say("--verify needs --journal"); exit(64) }
    do { exit(try StressVerifier(directory: directory, journalPath: journal).run() ? 0 : 2) } catch { say("error \(error)"); exit(1) }
}

if options["parallel-verify"] != nil {
    guard let journal = options["journal"] else { say("--parallel-verify needs --journal"); exit(64) }
    let threads = max(1, Int(options["threads"] ?? "4") ?? 4)
    let live = Set((options["live-lanes"] ?? "").split(separator: ",").compactMap { Int($0) })
    let verifier = StressParallelVerifier(directory: directory, journalPath: journal, threads: threads, liveLanes: live,
                                          lanes: max(1, Int(options["lanes"] ?? "1") ?? 1))
    do { exit(try verifier.run() ? 0 : 2) } catch {
        say("error \(error)"); exit(1)
    }
}

var journal: Int32 = -1
if let path = options["journal"] {
    journal = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard journal >= 0 else { say("cannot open journal \(path)"); exit(1) }
}
let table: ImageTable
do {
    table = try ImageTable(format: StressPattern.format, directory: directory)
} catch {
    if case .storage(.locked) = error.reason { say("locked"); exit(3) }
    say("error \(error)"); exit(1)
}
say("ready")
if options["parallel"] != nil {
    let writer = StressParallelWriter(table: table, threads: max(1, Int(options["threads"] ?? "4") ?? 4),
                                      seed: UInt64(options["seed"] ?? "1") ?? 1, journal: journal,
                                      every: max(1, Int(options["every"] ?? "20") ?? 20),
                                      firstLane: Int(options["lane"] ?? "0") ?? 0, totalLanes: Int(options["lanes"] ?? "0") ?? 0,
                                      stopFile: options["stop-file"])
    guard writer.run(count: Int(options["count"] ?? "0") ?? 0) else { exit(2) }
    say("done")
    exit(0)
}
var writer = StressWriter(table: table, random: SplitMix(state: UInt64(options["seed"] ?? "1") ?? 1), journal: journal)
do {
    guard try writer.run(count: Int(options["count"] ?? "0") ?? 0, every: max(1, Int(options["every"] ?? "20") ?? 20)) else { exit(2) }
} catch {
    say("error \(error)"); exit(1)
}
say("done")
