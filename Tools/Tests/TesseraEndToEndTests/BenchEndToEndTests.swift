import Foundation
import Testing
import Tessera
import TesseraTestSupport
@_spi(Internal) import TesseraRemote

/// Every `tessera bench … --json` (release build) on tiny inputs: the JSON decodes, describes the
/// inputs it was given (files, counts, sizes) and its derived numbers are positive and consistent
/// with each other. No timing is asserted.
@Suite("release tessera bench on tiny inputs",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct BenchEndToEndTests {
    /// Runs `tessera bench …` and requires a clean exit.
    static func bench(_ arguments: [String]) async throws -> ReleaseCLI.Run {
        let run = try await ReleaseCLI.run(["bench"] + arguments)
        try #require(run.status == 0 && run.signal == nil, "\(run)")
        return run
    }

    /// A directory holding copies of the two smallest JPEGs and the smallest PNG.
    static func tinyDirectory(_ label: String) throws -> (ScratchDirectory, jpegs: [URL], png: URL) {
        let scratch = try ScratchDirectory(label)
        let jpegs = try FileFacts.copy(try RealPhotos.smallest(2, ext: "jpg"), into: scratch)
        let png = try FileFacts.copy(try RealPhotos.smallest(1, ext: "png"), into: scratch)[0]
        return (scratch, jpegs, png)
    }

    static func close(_ a: Double, _ b: Double) -> Bool { abs(a - b) <= 1e-6 * max(1, abs(a), abs(b)) }

    // MARK: decode

    struct DecodeReport: Decodable {
        struct File: Decodable {
            var file: String; var format: String; var width: Int; var height: Int; var megapixels: Double; var sizeClass: String
            var probeSeconds: Double; var fullDecodeSeconds: Double; var downscaledDecodeSeconds: Double
            var cheapPathOnlySeconds: Double; var fullDecodePlusResizeSeconds: Double
        }
        struct Group: Decodable {
            var format: String; var sizeClass: String; var files: Int; var fullDecodeMs: Double; var downscaledDecodeMs: Double
            var fullDecodePlusResizeMs: Double; var speedupOfDownscaledOverFullPlusResize: Double
        }
        var directory: String; var thumbnailSize: String; var repetitions: Int
        var groups: [Group]; var files: [File]; var failures: [String]
    }

    /// `bench decode DIR --limit 2`: exactly the first two images of DIR by name, each with the format
    /// and size the library probes, megapixels = w×h/10⁶, positive times; groups partition the files
    /// by (format, size class) and their speedup is full+resize / downscaled.
    @Test("bench decode --json")
    func decode() async throws {
        let (scratch, jpegs, png) = try Self.tinyDirectory("bench-decode")
        let run = try await Self.bench(["decode", scratch.url.path, "--repetitions", "1", "--limit", "2", "--size", "64x64", "--json"])
        let report = try run.json(DecodeReport.self)
        let expected = (jpegs + [png]).map(\.lastPathComponent).sorted().prefix(2)
        #expect(report.files.map { URL(fileURLWithPath: $0.file).lastPathComponent } == Array(expected))
        #expect(report.failures.isEmpty && report.repetitions == 1 && report.thumbnailSize == "64x64")
        for file in report.files {
            let info = try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: file.file)))
            #expect(file.format == info.format.rawValue && file.width == info.width && file.height == info.height)
            #expect(Self.close(file.megapixels, Double(info.width * info.height) / 1e6))
            #expect([file.probeSeconds, file.fullDecodeSeconds, file.downscaledDecodeSeconds, file.cheapPathOnlySeconds,
                     file.fullDecodePlusResizeSeconds].allSatisfy { $0 > 0 })
        }
        #expect(report.groups.map(\.files).reduce(0, +) == report.files.count)
        let keys = Set(report.files.map { "\($0.format)|\($0.sizeClass)" })
        #expect(Set(report.groups.map { "\($0.format)|\($0.sizeClass)" }) == keys)
        for group in report.groups {
            #expect(group.fullDecodeMs > 0 && group.downscaledDecodeMs > 0)
            #expect(Self.close(group.speedupOfDownscaledOverFullPlusResize, group.fullDecodePlusResizeMs / group.downscaledDecodeMs))
        }
    }

    // MARK: ingest

    struct IngestReport: Decodable {
        struct Method: Decodable { var method: String; var workers: Int; var imagesPerSecond: Double; var roundRates: [Double] }
        struct Group: Decodable { var format: String; var files: Int; var passes: Int; var methods: [Method]; var ratios: [String: Double] }
        var directory: String; var thumbnail: Int; var rounds: Int; var workers: Int; var cores: Int
        var pillowVersion: String?; var skipped: [String]; var groups: [Group]
    }

    /// `bench ingest DIR --jobs 2` (two JPEGs and a PNG, one of the JPEGs in a subdirectory): a JPEG and
    /// a PNG group with their file counts; JPEG starts with libjpeg-turbo's ceiling, both have
    /// tessera-1 and tessera-N (N = 2 workers); each method has one rate per round, its rate is their
    /// median, and every ratio is the quotient of the two named rates. A Pillow virtualenv that cannot
    /// be created (missing interpreter) leaves Pillow out, listed in `skipped`, instead of failing the
    /// run; vipsthumbnail appears exactly when it is installed. With `--passes 3` every round goes through
    /// each group's files three times (JPEG: 6 images a round), each pass a new table entry, and without it a
    /// group takes enough passes for 192 images (JPEG: 2 small files, 96 passes; PNG: 1 file, 192), as
    /// these files are far from 64 MB.
    @Test("bench ingest --json: JPEG and PNG groups, 1 and N workers, also when Pillow is missing")
    func ingest() async throws {
        let (scratch, jpegs, _) = try Self.tinyDirectory("bench-ingest")
        let nested = scratch.url.appendingPathComponent("nested")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: jpegs[1], to: nested.appendingPathComponent(jpegs[1].lastPathComponent))
        let run = try await Self.bench(["ingest", scratch.url.path, "--rounds", "2", "--size", "48", "--jobs", "2",
                                  "--passes", "3", "--venv", scratch.path("no-venv"), "--json"])
        let report = try run.json(IngestReport.self)
        #expect(report.groups.map(\.passes) == [3, 3])
        #expect(report.thumbnail == 48 && report.rounds == 2 && report.workers == 2 && report.cores >= 1)
        #expect(report.groups.map(\.format) == ["jpeg", "png"])
        #expect(report.groups.map(\.files) == [2, 1])
        #expect(report.pillowVersion == nil && report.skipped.contains { $0.hasPrefix("pillow-1, pillow-N") })
        let vips = FileManager.default.isExecutableFile(atPath: "/usr/bin/vipsthumbnail")
        for group in report.groups {
            let methods = group.methods.map(\.method)
            #expect(methods.contains("tessera-1") && methods.contains("tessera-N"))
            #expect((methods.first == "turbojpeg-1/8") == (group.format == "jpeg"))
            #expect(!methods.contains { $0.hasPrefix("pillow") }, "no interpreter, no Pillow rows")
            #expect(methods.contains("vipsthumbnail-N") == vips)
            #expect(group.methods.first { $0.method == "tessera-N" }?.workers == 2)
            for method in group.methods {
                #expect(method.roundRates.count == report.rounds && method.roundRates.allSatisfy { $0 > 0 })
                let sorted = method.roundRates.sorted()
                #expect(Self.close(method.imagesPerSecond, (sorted[0] + sorted[1]) / 2), "\(method.method): median of the rounds")
            }
            let rate = Dictionary(uniqueKeysWithValues: group.methods.map { ($0.method, $0.imagesPerSecond) })
            #expect(group.ratios["tessera-N/tessera-1"] != nil)
            for (name, ratio) in group.ratios {
                let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
                // "tessera-1/turbojpeg-1/8": the second name itself holds a slash.
                let a = try #require(rate[parts[0]]), b = try #require(rate[parts[1]])
                #expect(Self.close(ratio, a / b), "\(name)")
            }
        }
        // The automatic pass count, measured on two methods only (`--methods`: the others would take a minute).
        let automatic = try await Self.bench(["ingest", scratch.url.path, "--rounds", "1", "--size", "48", "--jobs", "2",
                                              "--methods", "tessera-N,tessera-1", "--venv", scratch.path("no-venv"), "--json"])
            .json(IngestReport.self)
        #expect(automatic.groups.map(\.files) == [2, 1])
        #expect(automatic.groups.map(\.passes) == [96, 192])
        #expect(automatic.groups.map { $0.methods.map(\.method) } == [["tessera-1", "tessera-N"], ["tessera-1", "tessera-N"]])
        #expect(automatic.groups.map { $0.ratios.keys.sorted() } == [["tessera-N/tessera-1"], ["tessera-N/tessera-1"]])
        let unknown = try await ReleaseCLI.run(["bench", "ingest", scratch.url.path, "--methods", "tessera-1,pillow-2"])
        #expect(unknown.status != 0 && unknown.errors.contains("--methods: unknown pillow-2"), "\(unknown)")
    }

    // MARK: serve

    struct ServeReport: Decodable {
        struct Round: Decodable { var requests: Int; var seconds: Double; var requestsPerSecond: Double; var errors: Int }
        struct Measurement: Decodable {
            var server: String; var workload: String; var requestsPerSecond: Double; var p50Milliseconds: Double
            var p99Milliseconds: Double; var peakRSSBytes: Int; var errors: Int; var rounds: [Round]
            var cpuMicrosecondsPerRequest: Double?
            struct Answers: Decodable { var formats: [String: Int]; var meanBytes: Double }
            var answers: Answers?
        }
        struct Server: Decodable { var name: String; var version: String; var verifiedImages: Int }
        struct Target: Decodable { var name: String; var goal: String; var value: Double; var met: Bool }
        var directory: String; var sources: Int; var hotThumbnails: Int; var alsoHotThumbnails: [Int]?; var thumbnail: Int; var connections: Int
        var threads: Int; var durationSeconds: Int; var rounds: Int; var coldConcurrency: Int; var coldRequests: Int
        var skipped: [String]; var servers: [Server]; var measurements: [Measurement]
        var ratios: [String: Double]; var targets: [Target]
    }

    /// The thumbor virtualenv `make test` creates before the tests (`tessera bench peers --only thumbor`):
    /// `.build/thumbor-venv` of the `.build` directory the test binary lies in (`make test` builds the release
    /// binary in a scratch directory of its own, and makes the virtualenvs with the debug `tessera`).
    static func thumborVirtualenv() throws -> URL {
        let executable = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        return try #require(buildDirectory(containing: executable), "\(executable.path) lies in a .build directory").appendingPathComponent("thumbor-venv")
    }

    /// `bench serve` in a tiny mode (5 sources, 12 hot thumbnails of 64 px, 2 s wrk rounds, 4 connections)
    /// against the real servers: tessera serve, thumbor from PyPI as it ships and with its result storage, and
    /// nginx. Every server verified all 12 hot thumbnails as 64×64 images before measuring; every measurement
    /// has one round per --rounds with requests and no errors; a cold round made exactly --cold-requests
    /// requests (8: the 5 sources and 3 hard links to them); ratios are the quotients of the medians; targets agree with their values. No number is
    /// asserted beyond that. thumbor is left out when TESSERA_E2E_SKIP_THUMBOR is set, and when the set-up
    /// step could not install it (no PyPI): then the report must name the missing virtualenv.
    @Test("bench serve --json against tessera serve, thumbor and nginx")
    func serve() async throws {
        let skipThumbor = ProcessInfo.processInfo.environment["TESSERA_E2E_SKIP_THUMBOR"] != nil
        let venv = try Self.thumborVirtualenv()
        let installed = FileManager.default.isExecutableFile(atPath: venv.appendingPathComponent("bin/python").path)
        if !skipThumbor && !installed {
            print("bench serve end-to-end: no thumbor virtualenv at \(venv.path) (make test's `tessera bench peers` could not install it); thumbor is not compared")
        }
        let run = try await Self.bench(["serve", RealPhotos.directory.path, "--sources", "5", "--hot", "12", "--size", "64",
                                  "--duration", "2s", "--rounds", "2", "--connections", "4", "--threads", "1",
                                  "--cold-concurrency", "2", "--cold-requests", "8", "--thumbor-processes", "1", "--venv", venv.path, "--json"]
                                       + (skipThumbor ? ["--skip-thumbor"] : []))
        let report = try run.json(ServeReport.self)
        #expect(report.sources == 5 && report.hotThumbnails == 12 && report.thumbnail == 64 && report.durationSeconds == 2)
        #expect(report.coldRequests == 8)
        let withThumbor = !skipThumbor && installed
        let names = withThumbor ? ["tessera", "thumbor", "thumbor-result-storage", "nginx"] : ["tessera", "nginx"]
        #expect(report.servers.map(\.name) == names)
        let expectedSkips = skipThumbor ? ["thumbor: --skip-thumbor"] : installed ? [] : ["thumbor: no thumbor virtualenv at \(venv.path)"]
        #expect(report.skipped.count == expectedSkips.count && zip(report.skipped, expectedSkips).allSatisfy { $0.hasPrefix($1) },
                "\(report.skipped)")
        for server in report.servers { #expect(server.verifiedImages == 12, "\(server.name) answered every hot thumbnail with a 64x64 image") }
        let coldServers = names.filter { $0 != "nginx" }
        #expect(Set(report.measurements.map { "\($0.server) \($0.workload)" })
                == Set(names.map { "\($0) hot" } + coldServers.map { "\($0) cold" }))
        for m in report.measurements {
            #expect(m.rounds.count == 2 && m.errors == 0 && m.peakRSSBytes > 0, "\(m.server) \(m.workload)")
            // Every round ran without errors, and the measurement answered requests. One 2-second round may end
            // without a finished answer when the server is thumbor as it ships (it decodes and resizes every
            // request) and the other tests hold both cores: a round then counts none, which the median shows.
            #expect(m.rounds.allSatisfy { $0.errors == 0 && $0.seconds > 0 } && m.rounds.contains { $0.requests > 0 }
                    && (m.server == "thumbor" || m.rounds.allSatisfy { $0.requests > 0 }),
                    "\(m.server) \(m.workload): \(m.rounds.map { "\($0.requests) requests, \($0.errors) errors in \($0.seconds) s" })")
            let rates = m.rounds.map(\.requestsPerSecond)
            #expect(Self.close(m.requestsPerSecond, (rates[0] + rates[1]) / 2), "median of two rounds")
            #expect(m.p50Milliseconds > 0 && m.p99Milliseconds >= m.p50Milliseconds)
            if m.workload == "cold" { #expect(m.rounds.allSatisfy { $0.requests == 8 }, "--cold-requests a round") }
        }
        func rate(_ server: String, _ workload: String) throws -> Double {
            try #require(report.measurements.first { $0.server == server && $0.workload == workload }).requestsPerSecond
        }
        var expectedRatios = ["hot tessera/nginx"]
        if withThumbor {
            expectedRatios += ["hot tessera/thumbor", "hot tessera/thumbor-result-storage", "cold tessera/thumbor", "cold tessera/thumbor-result-storage"]
        }
        #expect(Set(report.ratios.keys) == Set(expectedRatios))
        for (name, ratio) in report.ratios {
            let parts = name.split(separator: " ")
            let servers = parts[1].split(separator: "/", maxSplits: 1).map(String.init)
            #expect(Self.close(ratio, try rate(servers[0], String(parts[0])) / rate(servers[1], String(parts[0]))), "\(name)")
        }
        // One target per ratio, the hot p99, and with thumbor the cold p50 against thumbor's.
        #expect(report.targets.count == expectedRatios.count + 1 + (withThumbor ? 1 : 0))
        for target in report.targets {
            let limit = Double(target.goal.split(separator: " ").last ?? "") ?? .nan
            #expect(target.met == (target.goal.hasPrefix("<") ? target.value < limit : target.value >= limit), "\(target.name)")
        }
    }

    @Test("bench serve on sources smaller than the box: each answer checked against what fill rightly makes of it (the box cut to the source), and the format mix and mean size reported; --also-hot measures a further hot set in the same run")
    func serveSmallSources() async throws {
        let scratch = try ScratchDirectory("bench-serve-small")
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        let image = try ImageDecoder().decode(try Data(contentsOf: photo))
        let small = try ImageDecoder().render(try Data(contentsOf: photo), processing: ImageProcessing(width: 150, height: 90, mode: .stretch))
        #expect(small.width == 150 && small.height == 90 && image.width > 200)
        try FileManager.default.copyItem(atPath: photo.path, toPath: scratch.path("large.jpg"))
        try Data(try ImageEncoder(format: .jpeg).encode(small)).write(to: URL(fileURLWithPath: scratch.path("small.jpg")))
        let common = ["serve", scratch.url.path, "--hot", "2", "--size", "200", "--duration", "1s", "--rounds", "1",
                      "--connections", "2", "--threads", "1", "--cold-concurrency", "2", "--cold-requests", "2", "--skip-thumbor", "--json"]
        let run = try await Self.bench(common + ["--also-hot", "5"])
        #expect(run.status == 0, "\(run)")
        let report = try run.json(ServeReport.self)
        #expect(report.hotThumbnails == 2 && report.alsoHotThumbnails == [5])
        for server in report.servers { #expect(server.verifiedImages == 5, "\(server.name) warmed the largest set") }
        #expect(Set(report.measurements.map { "\($0.server) \($0.workload)" })
                == ["tessera hot", "nginx hot", "tessera hot-5", "nginx hot-5", "tessera cold"])
        for m in report.measurements {
            let answers = try #require(m.answers, "\(m.server) \(m.workload) reports its answers")
            // The browser's Accept of the default: Tessera answers WebP in AVIF's place (200×200 and 150×90 are
            // under --avif-min-pixels' 90,000), and nginx serves Tessera's files.
            #expect(answers.formats == ["image/webp": m.workload == "hot-5" ? 5 : 2], "\(m.server) \(m.workload): \(answers.formats)")
            #expect(answers.meanBytes > 100, "\(m.server) \(m.workload)")
            #expect(m.rounds.count == 1 && m.rounds.allSatisfy { $0.requests > 0 && $0.errors == 0 }, "\(m.server) \(m.workload)")
            // Processor time per request, hot and cold alike (/proc's clock ticks: a round this short may read 0).
            #expect((m.cpuMicrosecondsPerRequest ?? -1) >= 0, "\(m.server) \(m.workload) reports its CPU a request")
        }
        let further = try #require(report.ratios["hot-5 tessera/nginx"])
        let rates = ["tessera", "nginx"].compactMap { name in report.measurements.first { $0.server == name && $0.workload == "hot-5" }?.requestsPerSecond }
        #expect(rates.count == 2 && Self.close(further, rates[0] / rates[1]))
        for list in ["2", "5,0", "5,x"] {
            let refused = try await ReleaseCLI.run(["bench"] + common + ["--also-hot", list])
            #expect(refused.status != 0 && refused.signal == nil && refused.errors.contains("--also-hot"), "--also-hot \(list)")
        }
        let hot = try #require(report.measurements.first { $0.server == "tessera" && $0.workload == "hot" }?.answers)
        let served = try #require(report.measurements.first { $0.server == "nginx" }?.answers)
        #expect(hot.meanBytes == served.meanBytes, "nginx serves the very bytes tessera made")
    }

    // MARK: retrieval

    struct RetrievalReport: Decodable {
        struct Memory: Decodable { var residentBytes: Int; var privateDirtyBytes: Int }
        var entries: Int; var tableHitNanoseconds: Double; var tableHitsPerSecond: Double; var dictionaryHitNanoseconds: Double
        var tableHitToDictionaryRatio: Double; var concurrentHitNanoseconds: Double; var concurrentHitWhileStoringNanoseconds: Double
        var storesDuringConcurrentHits: Int
        var jpegDecodeNanoseconds: Double; var pngDecodeNanoseconds: Double; var speedupOverJPEG: Double; var speedupOverPNG: Double
        var openEntries: Int; var openMilliseconds: Double?; var largeTableBytes: Int?
        var memoryBeforeTouch: Memory?; var memoryAfterTouch: Memory?
        struct URLRequests: Decodable {
            var processing: String
            var entries: Int
            var memoryHitNanoseconds: Double; var memoryDictionaryNanoseconds: Double; var memoryHitToDictionaryRatio: Double
            var tableHitNanoseconds: Double; var tableDictionaryNanoseconds: Double; var tableHitToDictionaryRatio: Double
        }
        var urlRequests: URLRequests
        struct Scale: Decodable {
            var entries: [Int]; var openMilliseconds: [Double]; var hitNanoseconds: [Double]
            var residentAfterOpenBytes: [Int]; var residentAfterHitsBytes: [Int]
            var openRatio: Double; var hitRatio: Double; var residentAfterOpenRatio: Double
        }
        var scale: Scale?
    }

    /// `bench retrieval` with 40 entries, a 200-entry open test and a 1 MB table: echoes the counts,
    /// all latencies positive, rates and speedups consistent with them, the large table holds as many
    /// 100×100 BGRA entries as fit in 1 MiB (per the library's ``ImageFormat``), memory measured; the
    /// processed URL requests (100×100 fill) answered from memory and from a table, each with its ratio to
    /// the dictionary; with the optional parts set to 0 they are absent.
    @Test("bench retrieval --json")
    func retrieval() async throws {
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        let common = ["retrieval", "--entries", "40", "--batch", "2000", "--batches", "3", "--image", photo.path, "--json"]
        let report = try await Self.bench(common + ["--open-entries", "200", "--large-table-mb", "1"]).json(RetrievalReport.self)
        #expect(report.entries == 40 && report.openEntries == 200)
        #expect([report.tableHitNanoseconds, report.dictionaryHitNanoseconds, report.jpegDecodeNanoseconds,
                 report.pngDecodeNanoseconds].allSatisfy { $0 > 0 })
        #expect(Self.close(report.tableHitsPerSecond, 1e9 / report.tableHitNanoseconds))
        #expect(Self.close(report.tableHitToDictionaryRatio, report.tableHitNanoseconds / report.dictionaryHitNanoseconds))
        #expect(report.concurrentHitNanoseconds > 0 && report.concurrentHitWhileStoringNanoseconds > 0)
        #expect(report.storesDuringConcurrentHits > 0, "the third thread stored while the two hit")
        #expect(Self.close(report.speedupOverJPEG, report.jpegDecodeNanoseconds / report.tableHitNanoseconds))
        #expect(Self.close(report.speedupOverPNG, report.pngDecodeNanoseconds / report.tableHitNanoseconds))
        #expect((report.openMilliseconds ?? 0) > 0)
        let entry = ImageFormat(name: "large", style: .bgra32, size: PixelSize(width: 100, height: 100), maximumCount: 1)
        let large = ImageFormat(name: "large", style: .bgra32, size: entry.size, maximumCount: (1 << 20) / entry.bytesPerEntry)
        #expect(report.largeTableBytes == large.maximumBytesOnDisk)
        #expect((report.memoryBeforeTouch?.residentBytes ?? 0) > 0 && (report.memoryAfterTouch?.residentBytes ?? 0) > 0)
        let urls = report.urlRequests
        #expect(urls.processing == ImageProcessing(width: 100, height: 100, mode: .fill).identity)
        #expect(urls.entries == 40, "--entries, under --url-entries' default of 1,000")
        #expect([urls.memoryHitNanoseconds, urls.memoryDictionaryNanoseconds, urls.tableHitNanoseconds, urls.tableDictionaryNanoseconds]
            .allSatisfy { $0 > 0 })
        #expect(Self.close(urls.memoryHitToDictionaryRatio, urls.memoryHitNanoseconds / urls.memoryDictionaryNanoseconds))
        #expect(Self.close(urls.tableHitToDictionaryRatio, urls.tableHitNanoseconds / urls.tableDictionaryNanoseconds))

        #expect(report.scale == nil, "section 6 only with --scale-entries")

        // With the optional parts off, and section 6 on: a table of 40 entries beside one of 400.
        let bare = try await Self.bench(common + ["--open-entries", "0", "--large-table-mb", "0", "--url-entries", "25",
                                                  "--scale-entries", "400"]).json(RetrievalReport.self)
        #expect(bare.urlRequests.entries == 25)
        #expect(bare.openMilliseconds == nil && bare.largeTableBytes == nil && bare.memoryAfterTouch == nil)
        #expect(bare.tableHitNanoseconds > 0)
        let scale = try #require(bare.scale)
        #expect(scale.entries == [40, 400])
        #expect((scale.openMilliseconds + scale.hitNanoseconds).allSatisfy { $0 > 0 })
        // Resident memory is read for the whole process: a small step's reading may come out below zero when
        // something else in the process gave pages back meanwhile. The large table's hits read hundreds of
        // pixel pages into the process, which no such noise hides.
        #expect(scale.residentAfterOpenBytes.count == 2 && scale.residentAfterHitsBytes.count == 2)
        #expect(scale.residentAfterHitsBytes[1] > 0, "\(scale.residentAfterHitsBytes)")
        #expect(Self.close(scale.openRatio, scale.openMilliseconds[1] / scale.openMilliseconds[0]))
        #expect(Self.close(scale.hitRatio, scale.hitNanoseconds[1] / scale.hitNanoseconds[0]))
        let refused = try await ReleaseCLI.run(["bench"] + common + ["--scale-entries", "-1"])
        #expect(refused.status != 0 && refused.signal == nil && refused.errors.contains("--scale-entries"))
    }

    // MARK: formats

    struct FormatsReport: Decodable {
        struct Row: Decodable {
            var image: String; var size: String; var pixels: Int; var format: String; var bytes: Int
            var loadMs: Double; var coldLoadMs: Double; var decodeMs: Double
        }
        var photo: String; var jpegQuality: Int; var webpQuality: Int; var avifQuality: Int; var rows: [Row]
    }

    /// `bench formats --images DIR` with DIR holding two large JPEGs of different shapes and a small
    /// one: picks the JPEG of at least 2048×1536 closest to 4:3 (computed here from the library's
    /// probe), echoes the qualities, and every row's file exists in the work dir with the reported
    /// byte count and decodes (library) to the row's format and size; each (image, size) has PNG, JPEG,
    /// WebP and AVIF; the chart is a PNG.
    @Test("bench formats --json")
    func formats() async throws {
        let scratch = try ScratchDirectory("bench-formats")
        let photos = try FileFacts.copy(try Self.formatsCandidates(), into: scratch)
        let work = scratch.path("work"), plot = scratch.path("chart.png")
        let report = try await Self.bench(["formats", "--images", scratch.url.path, "--work-dir", work, "--repetitions", "1",
                                     "--quality", "70", "--webp-quality", "60", "--avif-quality", "50", "--avif-speed", "9",
                                     "--plot", plot, "--json"]).json(FormatsReport.self)
        let qualifying = try photos.compactMap { photo -> (URL, Double)? in
            let size = try RealPhotos.size(of: photo.path)
            guard photo.pathExtension == "jpg", size.width >= 2048, size.height >= 1536 else { return nil }
            return (photo, abs(Double(size.width) / Double(size.height) - 4.0 / 3.0))
        }
        #expect(report.photo == qualifying.min { $0.1 < $1.1 }?.0.path)
        #expect(report.jpegQuality == 70 && report.webpQuality == 60 && report.avifQuality == 50)

        let extensions = ["png": ImageFileFormat.png, "jpeg": .jpeg, "webp": .webp, "avif": .avif]
        #expect(Set(report.rows.map(\.image)) == ["photo", "gradient"])
        for row in report.rows {
            let size = try #require(PixelSize(parsing: row.size))
            #expect(row.pixels == size.pixelCount && row.bytes > 0 && row.loadMs > 0 && row.decodeMs > 0 && row.coldLoadMs > 0)
            let path = work + "/\(row.image)-\(row.size).\(row.format)"
            #expect(FileFacts.size(path) == row.bytes, "\(path)")
            let info = try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(info.format == extensions[row.format] && info.width == size.width && info.height == size.height)
        }
        let cells = Dictionary(grouping: report.rows) { "\($0.image) \($0.size)" }
        #expect(cells.values.allSatisfy { Set($0.map(\.format)) == Set(extensions.keys) && $0.count == 4 })
        #expect(Set(report.rows.filter { $0.image == "photo" }.map(\.size)) == Set(report.rows.filter { $0.image == "gradient" }.map(\.size)))
        #expect(try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: plot))).format == .png)
    }

    /// The smallest JPEG plus the two smallest of at least 2048×1536 with different aspect ratios.
    static func formatsCandidates() throws -> [URL] {
        let jpegs = try RealPhotos.all().filter { $0.pathExtension == "jpg" }
            .map { ($0, try RealPhotos.size(of: $0.path), FileFacts.size($0.path) ?? 0) }.sorted { $0.2 < $1.2 }
        let large = jpegs.filter { $0.1.width >= 2048 && $0.1.height >= 1536 }
        var picked: [URL] = []
        var ratios: Set<Int> = []
        for (url, size, _) in large where ratios.insert(size.width * 1000 / size.height).inserted && picked.count < 2 { picked.append(url) }
        try #require(picked.count == 2, "two JPEGs of at least 2048x1536 with different shapes")
        let small = try #require(jpegs.first { $0.1.width < 2048 }?.0)
        return picked + [small]
    }

    // MARK: fetch

    struct FetchReport: Decodable {
        struct Scheduling: Decodable {
            var scheduling: String; var urgentMedianMs: Double; var urgentSamplesMs: [Double]
            var originRequests: Int; var originRequestsPerDistinctURL: Double
        }
        var latencyMs: Int; var backlog: Int; var urgent: Int; var width: Int; var repetitions: Int
        var results: [Scheduling]; var fifoOverPrioritized: Double
        var coalescingRequests: Int; var coalescingDistinctURLs: Int; var coalescingOriginRequests: Int
    }

    /// `bench fetch` against its own loopback origin with a small backlog: echoes its parameters; both
    /// schedulings report one sample per repetition, a median of them, at least one origin request per
    /// urgent request; the ratio is fifo/prioritized; the coalescing scenario asks distinct × copies
    /// times and the origin sees each distinct URL exactly once.
    @Test("bench fetch --json")
    func fetch() async throws {
        let (distinct, copies, backlog, urgent) = (4, 5, 12, 4)
        let report = try await Self.bench(["fetch", "--latency-ms", "5", "--backlog", "\(backlog)", "--urgent", "\(urgent)", "--width", "2",
                                     "--repetitions", "3", "--distinct", "\(distinct)", "--copies", "\(copies)", "--json"])
            .json(FetchReport.self)
        #expect(report.latencyMs == 5 && report.backlog == backlog && report.urgent == urgent && report.width == 2 && report.repetitions == 3)
        #expect(report.results.map(\.scheduling) == ["prioritized", "fifo"])
        for result in report.results {
            #expect(result.urgentSamplesMs.count == 3 && result.urgentSamplesMs.allSatisfy { $0 > 0 })
            #expect(Self.close(result.urgentMedianMs, result.urgentSamplesMs.sorted()[1]))
            #expect(result.originRequests >= urgent * report.repetitions, "every urgent image came from the origin")
            #expect(result.originRequestsPerDistinctURL >= 1)
        }
        #expect(Self.close(report.fifoOverPrioritized, report.results[1].urgentMedianMs / report.results[0].urgentMedianMs))
        #expect(report.coalescingRequests == distinct * copies && report.coalescingDistinctURLs == distinct)
        #expect(report.coalescingOriginRequests == distinct, "concurrent requests for one URL share one download")
    }

    /// More urgent requests to promote (half of --urgent) than the backlog holds is a usage error, not
    /// a crash (indexing before the backlog's first URL would trap).
    @Test("bench fetch refuses --urgent larger than twice --backlog")
    func fetchTooManyUrgent() async throws {
        let run = try await ReleaseCLI.run(["bench", "fetch", "--latency-ms", "1", "--backlog", "1", "--urgent", "4", "--width", "1",
                                      "--repetitions", "1", "--distinct", "1", "--copies", "1", "--json"])
        #expect(run.signal == nil, "\(run)")
        #expect(run.status != 0 && run.errors.contains("--backlog"), "\(run)")
        #expect(run.output.isEmpty, "no report")
    }
}
