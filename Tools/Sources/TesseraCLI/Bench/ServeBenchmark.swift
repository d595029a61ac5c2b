import ArgumentParser
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging
import TesseraBenchSupport
import TesseraServer

/// `tessera bench serve [DIR] [--source files|s3] [--json]`: `tessera serve` against thumbor and nginx on this
/// machine, the same images and thumbnail size, with wrk for the hot load and a fixed number of client threads
/// for the cold one; with `--source s3`, also `tessera serve` reading the same images from a local S3 server.
struct ServeBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Thumbnail service throughput and latency (wrk): tessera serve against thumbor 7 and nginx serving pre-made files; with --source s3, tessera over S3 (a local moto) beside tessera over files.",
        discussion: """
        DIR (default /usr/share/backgrounds/mate) is searched recursively for .jpg/.jpeg/.png sources (the first \
        --sources of them by name), copied into a scratch root. Three servers run on 127.0.0.1, each in its own \
        process group, per-request logging off in all three:
          tessera   this binary's `serve`, one preset thumb:SIZExSIZE:fill, tables in a scratch directory holding the whole hot set (--table-capacity: --hot, at least serve's default 10000), \
        --source-check-interval as given here (default 60: a memory hit reuses a source's stat for 60 s, as nginx \
        below reuses its open-file checks; 0 makes both check every request)
          thumbor   PyPI thumbor in a virtualenv (--venv, default .build/thumbor-venv next to this binary, \
        made by `tessera bench peers`; thumbor is skipped without it), file loader on the same root, unsafe URLs (loopback only), no result storage (as \
        thumbor ships: every request decoded again), no original storage, quality 82, --thumbor-processes \
        processes (default: the number of cores); URL /unsafe/SIZExSIZE/filters:format(jpeg)/PATH
          thumbor-result-storage   the same with thumbor's file result storage on (finished thumbnails kept as \
        files and served from there: thumbor's own cache)
          tessera-s3   with --source s3: this binary's `serve` run exactly as tessera, but reading every source from \
        S3: the scratch root's files are uploaded (same relative keys, under root/) to the bucket tessera-bench of a \
        moto_server on 127.0.0.1 (PyPI moto, a Python fake of S3, IAM authentication on so every request is signed and \
        checked; --moto-venv, default .build/moto-venv next to this binary, made by `tessera bench peers --only moto`; \
        an error without it), and tessera serves them as --source bench=s3://tessera-bench/root --s3-endpoint, \
        credentials in its AWS_ variables; URL /v1/thumb/@bench/PATH. --source-check-interval is how long a known \
        ETag answers for an object before a conditional GET. Cold figures include moto's own time to answer (one \
        Python process on the same cores), so they show the cost of a local S3 round trip, not of AWS
          tessera-baseline   with --baseline BINARY: another tessera binary (an earlier build, say) run exactly as \
        tessera, in the same interleaved rounds: before and after a change in one run
          nginx     /usr/sbin/nginx serving the thumbnails tessera made, as files (the limit for a hot hit), \
        one worker per core, sendfile, open_file_cache with open_file_cache_valid = --source-check-interval (none at 0)
        Every request of the bench (warm-up, hot and cold, to every server) carries --accept as its Accept header: by \
        default Chrome's for an image, image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8, so tessera \
        answers in the format a browser gets from it (AVIF); --accept '' sends no Accept (tessera answers JPEG). \
        thumbor's URL asks for JPEG whatever the header says.
        Every thumbnail used is first fetched from each server (by --cold-concurrency client threads) and must \
        decode at the size that server should answer: SIZExSIZE, or cut to the source at scale 1 on a side where \
        the source is smaller (fill does not enlarge; thumbor's SIZExSIZE is accepted too); tessera's answers, in the format it chose for that Accept, become nginx's files.
          hot    --hot thumbnail paths (default 200; sources repeated through hard links when there are fewer, each \
        link its own URL and its own thumbnail in every server, so --hot 5000 is a hot set of 5,000 URLs), requested \
        over and over by wrk (-t --threads -c --connections -d --duration, a Lua script cycling through the paths) \
        after one warm-up request each; rounds interleaved, order rotated; after each server's round the bench \
        waits until that server's processes are idle (thumbor, slower than the load, answers what was queued when \
        wrk stopped), so the next round does not share the cores with it
          hot-N  with --also-hot N,…: further hot sets in the same run, each the first N paths of the largest set \
        (so --hot 200 --also-hot 5000,50000 measures the cost as the set grows, every set in every round): tessera, \
        tessera-baseline, tessera-s3 and nginx warm up and serve every set; thumbor only the --hot set; the tables \
        hold the largest set; with --also-hot every server's round of every set begins with one request per URL of \
        the set (unmeasured, by --cold-concurrency clients), as a run of that set alone begins, since a larger set \
        measured before it may have pushed its answers out of tessera's response cache
          cold   tessera (and tessera-s3, which then downloads every object from moto) and both thumbors restarted \
        with empty tables / result storage, then --cold-requests distinct URLs requested once each by \
        --cold-concurrency client threads (one connection per request): every source, then hard links to the \
        sources (cold/KKK-name) until there are --cold-requests, each its own URL and so its own miss, so that a \
        round lasts long enough that the last requests' turn alone on the cores does not weigh on its rate; \
        nginx cannot make thumbnails
        Every server measured (tessera-s3 included) takes part in the same interleaved rounds. \
        Each figure is the median of --rounds rounds. Peak RSS: the sum of VmHWM (/proc/PID/status) of the \
        server's processes, after the hot rounds / after a cold pass (largest round).

        JSON (--json): directory, source (with --source s3 only: "s3"), s3 (with --source s3 only: bucket, prefix, \
        motoVersion, objects, bytes, uploadSeconds), accept (the Accept header sent; absent when none), sources, \
        hotThumbnails, alsoHotThumbnails (with --also-hot only), thumbnail (edge px), connections, threads, durationSeconds, \
        rounds, coldConcurrency, coldRequests, cores, thumborProcesses, sourceCheckIntervalSeconds, skipped, servers (name, version, verifiedImages: \
        thumbnails fetched and decoded at a size a SIZE×SIZE fill of their source may rightly be: the box, or the box cut \
        to a smaller source, which Tessera does not enlarge; thumbor may enlarge), measurements (server, workload hot|hot-N|cold, \
        requestsPerSecond, p50Milliseconds, p99Milliseconds: medians of rounds; peakRSSBytes; errors summed over \
        rounds; cpuMicrosecondsPerRequest, the median of the rounds' processor time (user and system, all the \
        server's processes, /proc/PID/stat; a cold round's from after the restart) per request; answers: formats (content type: count) and meanBytes of the \
        bodies, hot of the warm-up's answers, cold of every round's; rounds: requests, seconds, requestsPerSecond, p50Milliseconds, \
        p99Milliseconds, errors, cpuMicrosecondsPerRequest, answers), ratios \
        ("hot tessera/thumbor", "hot tessera/thumbor-result-storage", "hot tessera/nginx", "cold tessera/thumbor", \
        "cold tessera/thumbor-result-storage", with --baseline "hot tessera/tessera-baseline" and "cold tessera/tessera-baseline", \
        with --source s3 "hot tessera-s3/tessera" and "cold tessera-s3/tessera", with --also-hot "hot-N tessera/nginx" (and \
        "hot-N tessera/tessera-baseline"): requestsPerSecond ratios) and targets (name, goal, value, met).
        """
    )

    @Argument(help: "Directory of source images (searched recursively).") var directory = "/usr/share/backgrounds/mate"
    @Option(help: "Sources used (the first N by path; default all).") var sources: Int?
    @Option(help: "Distinct thumbnail URLs in the hot load (5000: a many-URL hot set).") var hot = 200
    @Option(help: "Further hot sets measured in the same run, as workloads hot-N: a comma-separated list of URL counts (5000,50000), the first N of the largest set; tessera, tessera-baseline, tessera-s3 and nginx only.")
    var alsoHot: String?
    @Option(help: "The Accept header of every request (default: Chrome's for an image; '' sends none).")
    var accept = ServeBenchLoad.browserAccept
    @Option(help: "Thumbnail edge in pixels (a fill crop to SIZE×SIZE).") var size = 200
    @Option(help: "wrk connections.") var connections = 64
    @Option(help: "wrk threads.") var threads = 2
    @Option(help: "wrk duration of one hot round: N, Ns or Nm.") var duration = "10s"
    @Option(help: "Measured rounds of each workload.") var rounds = 3
    @Option(help: "Client threads of the cold pass.") var coldConcurrency = 8
    @Option(help: "Distinct URLs of a cold round, at least one per source: the sources, then hard links to them.")
    var coldRequests = 200
    @Option(help: "thumbor processes (default: the number of cores).") var thumborProcesses = ParallelismLimit.coreCount
    @Option(help: "Seconds a file check answers for the file: tessera's --source-check-interval and nginx's open_file_cache_valid (0: both check every request, nginx without its open-file cache).")
    var sourceCheckInterval = 60
    @Option(help: "The thumbor virtualenv (`tessera bench peers` makes it; default: .build/thumbor-venv next to this binary).") var venv: String?
    @Flag(help: "Leave thumbor out (for quick tests where it cannot be installed); listed in `skipped`.") var skipThumbor = false
    @Option(help: "Another tessera binary (an earlier build) to measure as `tessera-baseline` in the same interleaved rounds.")
    var baseline: String?
    @Option(help: "Where tessera's sources are: files (the scratch root, the default), or s3 to also measure tessera-s3, tessera serving the same files uploaded to a local moto S3 server.")
    var source: ServeBenchSource = .files
    @Option(help: "The moto virtualenv for --source s3 (`tessera bench peers --only moto` makes it; default: .build/moto-venv next to this binary).")
    var motoVenv: String?
    @Flag(help: "Print JSON.") var json = false

    struct Measurement: Codable {
        var server: String
        var workload: String
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
        var peakRSSBytes: Int
        var errors: Int
        /// Hot (and hot-N): the median of the rounds' processor time per request (all the server's processes).
        var cpuMicrosecondsPerRequest: Double?
        /// The formats answered and the mean body size: hot, of the warm-up's answers (the hot set, once each);
        /// cold, of every round's answers.
        var answers: ServeBenchLoad.AnswerMix?
        var rounds: [ServeBenchLoad.Round]
    }

    struct Server: Codable {
        var name: String
        var version: String
        var verifiedImages: Int
    }

    struct Target: Codable {
        var name: String
        var goal: String
        var value: Double
        var met: Bool
    }

    /// The bucket of `--source s3`.
    struct S3Details: Codable {
        var bucket: String
        var prefix: String
        var motoVersion: String
        var objects: Int
        var bytes: Int
        var uploadSeconds: Double
    }

    struct Report: Codable {
        var directory: String
        /// `"s3"` with `--source s3`; absent otherwise, so the report of the default run is unchanged.
        var source: String?
        var s3: S3Details?
        /// The `Accept` header every request carried; absent when none.
        var accept: String?
        var sources: Int
        var hotThumbnails: Int
        /// `--also-hot`'s URL counts, each measured as the workload `hot-N`; absent without it.
        var alsoHotThumbnails: [Int]?
        var thumbnail: Int
        var connections: Int
        var threads: Int
        var durationSeconds: Int
        var rounds: Int
        var coldConcurrency: Int
        var coldRequests: Int
        var cores: Int
        var thumborProcesses: Int
        var sourceCheckIntervalSeconds: Int
        var skipped: [String]
        var servers: [Server]
        var measurements: [Measurement]
        var ratios: [String: Double]
        var targets: [Target]
    }

    var seconds: Int? {
        var text = duration.lowercased()
        var factor = 1
        if text.hasSuffix("m") { factor = 60; text.removeLast() } else if text.hasSuffix("s") { text.removeLast() }
        return Int(text).map { $0 * factor }
    }

    func validate() throws {
        guard let seconds, seconds >= 1 else { throw ValidationError("--duration is N, Ns or Nm, at least 1 second") }
        if rounds < 1 || hot < 1 || size < 1 || connections < 1 || threads < 1 || coldConcurrency < 1 || coldRequests < 1 || thumborProcesses < 1 {
            throw ValidationError("--rounds, --hot, --size, --connections, --threads, --cold-concurrency, --cold-requests and --thumbor-processes must be at least 1")
        }
        if sourceCheckInterval < 0 { throw ValidationError("--source-check-interval must be 0 or more seconds") }
        if threads > connections { throw ValidationError("--threads must not exceed --connections (wrk)") }
        if let sources, sources < 1 { throw ValidationError("--sources must be at least 1") }
        _ = try alsoHotCounts()
        if motoVenv != nil, source != .s3 { throw ValidationError("--moto-venv is for --source s3") }
    }

    /// `--also-hot`'s URL counts, each at least 1 and none the same as --hot or another.
    func alsoHotCounts() throws -> [Int] {
        guard let alsoHot else { return [] }
        let counts = alsoHot.split(separator: ",", omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !counts.isEmpty, counts.allSatisfy({ ($0 ?? 0) >= 1 }) else {
            throw ValidationError("--also-hot is a comma-separated list of URL counts of at least 1 (5000,50000)")
        }
        let values = counts.compactMap { $0 }
        guard Set(values + [hot]).count == values.count + 1 else { throw ValidationError("--also-hot repeats a count (--hot's included)") }
        return values
    }

    func run() async throws {
        let wrkSeconds = seconds ?? 10
        let alsoHot = try alsoHotCounts()
        let largestHot = ([hot] + alsoHot).max() ?? hot
        var files = try IngestBenchmark.listRecursively(directory).filter { ["jpg", "jpeg", "png"].contains(($0 as NSString).pathExtension.lowercased()) }
        if let sources { files = Array(files.prefix(sources)) }
        guard !files.isEmpty else { throw ValidationError("no JPEG or PNG files in \(directory)") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-serve-\(getpid())")
        try? FileManager.default.removeItem(at: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // The hot paths of every set: each set is the first N of the largest.
        let (root, cold, allHotPaths) = try Self.prepareRoot(files, hot: largestHot, cold: coldRequests, in: scratch)
        let hotPaths = Array(allHotPaths.prefix(hot))
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var skipped: [String] = []

        var generation = 0
        func fresh(_ name: String) -> URL {
            generation += 1
            let url = scratch.appendingPathComponent("\(name)-\(generation)")
            try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            return url
        }
        // Tables that hold the whole hot set (never fewer entries than serve's default), so that a hot URL past
        // the response cache is a table hit, not a decode.
        let tableCapacity = max(ServerConfiguration(root: root.path).tableCapacity, largestHot, cold.count)
        let tessera = BenchServer.tessera(binary: binary, root: root, size: size, port: try Origin.unusedPort(),
                                          sourceCheckInterval: sourceCheckInterval,
                                          tables: { fresh("tables") }, tableCapacity: tableCapacity, log: scratch.appendingPathComponent("tessera.log"))
        var servers = [tessera]
        var versions = ["tessera": "this binary"]
        var bucket: ServeBenchS3?
        defer { bucket?.stop() }
        if source == .s3 {
            let location = motoVenv.map { URL(fileURLWithPath: $0) } ?? PythonVirtualenv.defaultLocation(PythonVirtualenv.Peer.moto.name)
            Terminal.progress("uploading the sources to moto")
            let uploaded = try await ServeBenchS3.start(venv: location, root: root, paths: cold + allHotPaths.filter { !Set(cold).contains($0) })
            bucket = uploaded
            servers.append(uploaded.server(binary: binary, root: root, size: size, port: try Origin.unusedPort(),
                                           sourceCheckInterval: sourceCheckInterval, tables: { fresh("s3-tables") }, tableCapacity: tableCapacity,
                                           log: scratch.appendingPathComponent("tessera-s3.log")))
            versions["tessera-s3"] = "this binary, moto \(uploaded.version)"
        }
        if let baseline {
            guard FileManager.default.isExecutableFile(atPath: baseline) else { throw ValidationError("--baseline \(baseline) is not an executable") }
            servers.append(BenchServer.tessera(name: "tessera-baseline", binary: baseline, root: root, size: size, port: try Origin.unusedPort(),
                                               sourceCheckInterval: sourceCheckInterval, tables: { fresh("baseline-tables") },
                                               tableCapacity: tableCapacity,
                                               log: scratch.appendingPathComponent("tessera-baseline.log")))
            versions["tessera-baseline"] = baseline
        }
        if skipThumbor {
            skipped.append("thumbor: --skip-thumbor")
        } else {
            do {
                let location = venv.map { URL(fileURLWithPath: $0) } ?? PythonVirtualenv.defaultLocation(PythonVirtualenv.Peer.thumbor.name)
                let environment = try PythonVirtualenv.existing(location, .thumbor)
                for resultStorage in [nil, { fresh("thumbor-results") }] as [(() -> URL)?] {
                    let server = BenchServer.thumbor(venv: location, root: root, size: size, port: try Origin.unusedPort(),
                                                     processes: thumborProcesses, scratch: scratch, resultStorage: resultStorage)
                    versions[server.name] = environment.version
                    servers.append(server)
                }
            } catch {
                skipped.append("thumbor: \(error)")
            }
        }
        let nginxPrefix = scratch.appendingPathComponent("nginx")
        let nginx = BenchServer.nginx(prefix: nginxPrefix, port: try Origin.unusedPort(), workers: ParallelismLimit.coreCount,
                                      fileCheckInterval: sourceCheckInterval,
                                      log: scratch.appendingPathComponent("nginx.log"))
        versions["nginx"] = "/usr/sbin/nginx"

        // Warm-up: every hot thumbnail once from each server, checked; tessera's bytes (in the format it chose
        // for --accept) become nginx's files, named with that format's extension.
        var verified: [String: Int] = [:]
        var hotMixes: [String: ServeBenchLoad.AnswerMix] = [:]
        var nginxPaths: [String] = []
        var alsoHotMixes: [String: [Int: ServeBenchLoad.AnswerMix]] = [:]
        let sourceSizes = try allHotPaths.map { path in
            try ImageDecoder().probe(Data(contentsOf: root.appendingPathComponent(path.removingPercentEncoding ?? path))).displaySize
        }
        for server in servers {
            try server.start()
            // The further hot sets are not thumbor's (tens of thousands of its thumbnails would take hours).
            let paths = Self.takesAlsoHot(server) ? allHotPaths : hotPaths
            Terminal.progress("warm-up \(server.name): \(paths.count) thumbnails")
            let answers = try warm(server, targets: paths.map(server.target), sources: sourceSizes)
            verified[server.name] = answers.count
            hotMixes[server.name] = ServeBenchLoad.AnswerMix(answers.prefix(hot).map { ($0.contentType, $0.body.count) })
            for count in alsoHot where Self.takesAlsoHot(server) {
                alsoHotMixes[server.name, default: [:]][count] = ServeBenchLoad.AnswerMix(answers.prefix(count).map { ($0.contentType, $0.body.count) })
            }
            if server === tessera {
                for (path, (body, type)) in zip(paths, answers) {
                    let name = path + "." + (type.split(separator: "/").last.map(String.init) ?? "jpg").replacingOccurrences(of: "jpeg", with: "jpg")
                    let file = nginxPrefix.appendingPathComponent("www").appendingPathComponent(name.removingPercentEncoding ?? name)
                    try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try Data(body).write(to: file)
                    nginxPaths.append(name)
                }
            }
        }
        try nginx.start()
        Terminal.progress("warm-up nginx: \(nginxPaths.count) files")
        let nginxAnswers = try warm(nginx, targets: nginxPaths.map(nginx.target), sources: sourceSizes)
        verified["nginx"] = nginxAnswers.count
        hotMixes["nginx"] = ServeBenchLoad.AnswerMix(nginxAnswers.prefix(hot).map { ($0.contentType, $0.body.count) })
        for count in alsoHot { alsoHotMixes["nginx", default: [:]][count] = ServeBenchLoad.AnswerMix(nginxAnswers.prefix(count).map { ($0.contentType, $0.body.count) }) }
        // Each hot set (workload, URL count) with the servers that take it and their targets.
        func targets(_ count: Int, of taking: [BenchServer]) -> [(BenchServer, [String])] {
            taking.map { server in (server, allHotPaths.prefix(count).map(server.target)) } + [(nginx, nginxPaths.prefix(count).map(nginx.target))]
        }
        let hotSets = [(workload: "hot", servers: targets(hot, of: servers))]
            + alsoHot.map { (workload: "hot-\($0)", servers: targets($0, of: servers.filter(Self.takesAlsoHot))) }

        // Hot: interleaved rounds, order rotated; in each round every set in turn.
        var hotRounds: [String: [String: [ServeBenchLoad.Round]]] = [:]
        for round in 0..<rounds {
            for set in hotSets {
                for k in 0..<set.servers.count {
                    let (server, targets) = set.servers[(k + round) % set.servers.count]
                    if !alsoHot.isEmpty {
                        // As a run of this set alone begins: one request per URL, since a larger set measured
                        // before it may have pushed its answers out of the response cache.
                        Terminal.progress("\(set.workload) round \(round + 1)/\(rounds): \(server.name), one request per URL first")
                        _ = ServeBenchLoad.pass(port: server.port, targets: targets, accept: accept, concurrency: coldConcurrency)
                    }
                    Terminal.progress("\(set.workload) round \(round + 1)/\(rounds): \(server.name)")
                    let result = try server.measuringCPU {
                        try ServeBenchLoad.wrk(port: server.port, paths: targets, accept: accept, threads: threads, connections: connections,
                                               seconds: wrkSeconds, scratch: scratch)
                    }
                    Terminal.progress("\(set.workload) round \(round + 1)/\(rounds): \(server.name) finishing what it was sent")
                    server.waitUntilIdle()
                    hotRounds[set.workload, default: [:]][server.name, default: []].append(result)
                }
            }
        }
        var measurements = hotSets.flatMap { set in
            set.servers.map { server, _ in
                var measurement = Self.measurement(server.name, set.workload, hotRounds[set.workload]?[server.name] ?? [], peak: server.peakResidentBytes())
                measurement.answers = set.workload == "hot" ? hotMixes[server.name] : alsoHotMixes[server.name]?[Int(set.workload.dropFirst(4)) ?? 0]
                return measurement
            }
        }
        nginx.stop()

        // Cold: each round restarts tessera and the thumbors on empty tables / result storage, then one pass over all sources.
        var coldRounds: [String: [ServeBenchLoad.Round]] = [:]
        var coldPeaks: [String: Int] = [:]
        for round in 0..<rounds {
            for k in 0..<servers.count {
                let server = servers[(k + round) % servers.count]
                Terminal.progress("cold round \(round + 1)/\(rounds): \(server.name)")
                try server.start()
                let result = server.measuringCPU {
                    ServeBenchLoad.pass(port: server.port, targets: cold.map(server.target), accept: accept, concurrency: coldConcurrency)
                }
                coldPeaks[server.name] = max(coldPeaks[server.name] ?? 0, server.peakResidentBytes())
                server.stop()
                coldRounds[server.name, default: []].append(result)
            }
        }
        measurements += servers.map { Self.measurement($0.name, "cold", coldRounds[$0.name] ?? [], peak: coldPeaks[$0.name] ?? 0) }
        Terminal.progress(nil)

        var report = makeReport(files: files.count, coldRequests: cold.count, seconds: wrkSeconds, alsoHot: alsoHot, skipped: skipped, measurements: measurements,
                                servers: (servers + [nginx]).map { Server(name: $0.name, version: versions[$0.name] ?? "", verifiedImages: verified[$0.name] ?? 0) })
        if let bucket {
            report.source = ServeBenchSource.s3.rawValue
            report.s3 = S3Details(bucket: ServeBenchS3.bucket, prefix: ServeBenchS3.prefix, motoVersion: bucket.version, objects: bucket.objects,
                                  bytes: bucket.bytes, uploadSeconds: bucket.uploadSeconds)
        }
        if json { try Terminal.json(report) } else { Self.print(report) }
    }

    /// Whether `server` is measured on `--also-hot`'s sets: every tessera and nginx, not thumbor.
    static func takesAlsoHot(_ server: BenchServer) -> Bool { !server.name.hasPrefix("thumbor") }

    /// Fetches every target from `server` with `--accept` on `--cold-concurrency` client threads, each answer
    /// verified as what a SIZE×SIZE fill of its source (of display size `sources[i]`) may rightly be
    /// (``ServeBenchLoad/fillSizes(box:source:enlarging:)``: thumbor enlarges a smaller source, Tessera does
    /// not): the bodies and content types in the order of `targets`.
    func warm(_ server: BenchServer, targets: [String], sources: [PixelSize]) throws -> [(body: [UInt8], contentType: String)] {
        let (port, name, accept, size) = (server.port, server.name, accept, size)
        let enlarging = server.name.hasPrefix("thumbor")
        return try ServeBenchLoad.inParallel(targets.count, threads: coldConcurrency) { index in
            Result {
                try ServeBenchLoad.verifiedThumbnail(port: port, targets[index], accept: accept,
                                                     expected: ServeBenchLoad.fillSizes(box: size, source: sources[index], enlarging: enlarging),
                                                     server: name)
            }
        }.map { try $0.get() }
    }

    /// Copies the sources into `scratch/root/src/NNN-name` and returns the root, the cold paths and the `hot`
    /// hot paths. Each set is the sources themselves, then hard links to them (`cold/KKK-name`,
    /// `hot/KKK-name`), cycling through them, until it has `cold` (at least one per source) or `hot` paths
    /// (plain files, so no server resolves a symlink). Paths are relative and need no percent-encoding
    /// (names are reduced to letters, digits, `._-`).
    static func prepareRoot(_ files: [String], hot: Int, cold coldCount: Int, in scratch: URL) throws -> (URL, [String], [String]) {
        let root = scratch.appendingPathComponent("root")
        let source = root.appendingPathComponent("src")
        try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        let names = files.enumerated().map { index, file in
            String(format: "%03d-", index) + String((file as NSString).lastPathComponent.map { allowed.contains($0) ? $0 : "_" })
        }
        for (file, name) in zip(files, names) {
            try FileManager.default.copyItem(at: URL(fileURLWithPath: file), to: source.appendingPathComponent(name))
        }
        let sources = names.map { "src/\($0)" }
        /// The sources, then `count - sources.count` hard links to them in `directory`.
        func paths(_ count: Int, linkedIn directory: String) throws -> [String] {
            guard count > names.count else { return Array(sources.prefix(count)) }
            let links = root.appendingPathComponent(directory)
            try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
            return try sources + (names.count..<count).map { k -> String in
                let name = names[k % names.count]
                let link = String(format: "%03d-", k) + name
                try FileManager.default.linkItem(at: source.appendingPathComponent(name), to: links.appendingPathComponent(link))
                return "\(directory)/\(link)"
            }
        }
        return (root, try paths(max(coldCount, names.count), linkedIn: "cold"), try paths(hot, linkedIn: "hot"))
    }
}
