import ArgumentParser
import CJPEGFloor
import ToolsTurboJPEG
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging

/// `tessera bench ingest DIR [--json]`: thumbnail ingest rate for the JPEG and the PNG files of DIR, side
/// by side in one run: libjpeg-turbo's own 1/8-scale decode and its entropy decoding alone (the JPEG
/// floor), Tessera on 1 and N cores, Pillow and pyvips (PyPI, in virtualenvs under `.build`) and
/// vipsthumbnail on 1 and N processes.
struct IngestBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Thumbnail ingest rate (images/s) for JPEG and PNG: Tessera on 1 and N cores against libjpeg-turbo's 1/8 decode and entropy decoding, Pillow, pyvips and vipsthumbnail.",
        discussion: """
        DIR is searched recursively for .jpg/.jpeg and .png files; JPEGs and PNGs are measured as two groups. \
        Every method runs once per round over all files of a group (read from the page cache), taken --passes \
        times: by default enough passes for 192 images a round, or for 64 MB of files if that takes fewer, \
        each pass through symbolic links of its own so that every image is a new table entry for tessera and a \
        new file for every method, and one round lasts long enough that a scheduling hiccup or an idle core at \
        its end does not decide it. Rounds are \
        interleaved (each round runs every method, in a rotated order) after one warm-up round, and each \
        rate is the median of its rounds. N = --jobs (default: the number of cores).
          turbojpeg-1/8     (JPEG only) tjDecompress2 at the smallest DCT scale covering the thumbnail, 1 thread
          entropy-floor     (JPEG only) libjpeg-turbo's jpeg_read_coefficients: read + Huffman-decode every \
        coefficient of every scan, no inverse DCT, a fresh decompressor per file, 1 thread. The floor of any \
        decoder that reads every symbol; tessera-1/entropy-floor says how close ingest gets to it
          tessera-1         read + decode + aspect-fill resample + store into a bgra32 table, `table ingest --jobs 1`
          tessera-N         the same with --jobs N
          pillow-1          PyPI Pillow: Image.open, draft('RGB', size), thumbnail(size), load(); 1 process
          pillow-N          the same, the files split over N processes started together
          pyvips-1          PyPI pyvips + pyvips-binary (libvips): Image.thumbnail(file, size, height=size) and \
        write_to_memory() (pixels in memory, no encode), VIPS_CONCURRENCY=1; 1 process
          pyvips-N          the same, the files split over N processes started together
          vipsthumbnail-1   vipsthumbnail -s SIZExSIZE to .v files, VIPS_CONCURRENCY=1, 1 process (start included)
          vipsthumbnail-N   the same, the files split over N processes
        Pillow and pyvips come from virtualenvs with their PyPI packages that `tessera bench peers` creates, at \
        --venv and --pyvips-venv (defaults: .build/pillow-venv and .build/pyvips-venv next to this binary), \
        never the system's python3-pil or Debian's libvips. The Python processes start, import their module \
        and report ready; all are then told to go at once and time their own loop (CLOCK_MONOTONIC), so \
        interpreter start-up is not counted. Methods whose tool is missing are listed in `skipped`.

        JSON (--json): directory, thumbnail (edge in px), rounds, workers (N), cores, pillowVersion and \
        pyvipsVersion (null without them), skipped (why methods are missing), and groups: one per format with \
        files (distinct), passes, methods (method, workers, imagesPerSecond = median of roundRates, roundRates in images/s, note) \
        and ratios: "A/B" = imagesPerSecond of A ÷ that of B, for tessera-1/pillow-1, tessera-N/pillow-N, \
        tessera-1/pyvips-1, tessera-N/pyvips-N, tessera-1/vipsthumbnail-1, tessera-N/vipsthumbnail-N, \
        tessera-N/tessera-1 and (JPEG) tessera-1/turbojpeg-1/8 and tessera-1/entropy-floor, when both methods ran.
        """
    )

    @Argument(help: "Directory of photographs (searched recursively).") var directory: String
    @Option(help: "Thumbnail edge in pixels.") var size = 100
    @Option(help: "Measured rounds (after one warm-up round).") var rounds = 9
    @Option(help: "Times each round goes through a group's files (default: enough for 192 images or 64 MB, whichever is fewer).")
    var passes: Int?
    @Option(help: "N: threads for tessera-N, processes for pillow-N and vipsthumbnail-N (default: the number of cores).")
    var jobs = ParallelismLimit.coreCount
    @Option(help: "The Pillow virtualenv (`tessera bench peers` makes it; default: .build/pillow-venv next to this binary).")
    var venv: String?
    @Option(help: "The pyvips virtualenv (`tessera bench peers` makes it; default: .build/pyvips-venv next to this binary).")
    var pyvipsVenv: String?
    @Option(name: .customLong("methods"),
            help: "Only these methods, comma-separated (e.g. tessera-1,tessera-N; default: every method whose tool is there).")
    var methodList: String?
    @Flag(help: "Print JSON.") var json = false

    /// Every method's name, in the order a group lists them.
    static let methodNames = ["turbojpeg-1/8", "entropy-floor", "tessera-1", "tessera-N", "pillow-1", "pillow-N",
                              "pyvips-1", "pyvips-N", "vipsthumbnail-1", "vipsthumbnail-N"]

    /// The methods `--methods` names, or `nil` for all.
    var chosenMethods: Set<String>? {
        methodList.map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
    }

    struct MethodResult: Codable {
        var method: String
        var workers: Int
        var imagesPerSecond: Double
        var roundRates: [Double]
        var note: String
    }

    struct Group: Codable {
        var format: String
        var files: Int
        var passes: Int
        var methods: [MethodResult]
        var ratios: [String: Double]
    }

    struct Report: Codable {
        var directory: String
        var thumbnail: Int
        var rounds: Int
        var workers: Int
        var cores: Int
        var pillowVersion: String?
        var pyvipsVersion: String?
        var skipped: [String]
        var groups: [Group]
    }

    /// One way of making thumbnails of a list of files; returns images per second.
    struct Method {
        var name: String
        var workers: Int
        var note: String
        var run: ([String]) async throws -> Double
    }

    func validate() throws {
        if rounds < 1 { throw ValidationError("--rounds must be at least 1") }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if size < 1 { throw ValidationError("--size must be at least 1") }
        if let passes, passes < 1 { throw ValidationError("--passes must be at least 1") }
        if let chosen = chosenMethods {
            let unknown = chosen.subtracting(Self.methodNames).sorted()
            if chosen.isEmpty || !unknown.isEmpty {
                throw ValidationError("--methods: unknown \(unknown.joined(separator: ", ")); the methods are \(Self.methodNames.joined(separator: ", "))")
            }
        }
    }

    func run() async throws {
        HeapPolicy.configureForBatch()   // as `table ingest`, which tessera-1 and tessera-N stand for
        let all = try Self.listRecursively(directory)
        let groups = [("jpeg", all.filter { ["jpg", "jpeg"].contains(($0 as NSString).pathExtension.lowercased()) }),
                      ("png", all.filter { ($0 as NSString).pathExtension.lowercased() == "png" })].filter { !$0.1.isEmpty }
        guard !groups.isEmpty else { throw ValidationError("no JPEG or PNG files in \(directory)") }
        let target = PixelSize(width: size, height: size)
        var skipped: [String] = []

        func peer(_ peer: PythonVirtualenv.Peer, at path: String?) -> (python: String, version: String)? {
            do {
                return try PythonVirtualenv.existing(path.map { URL(fileURLWithPath: $0) } ?? PythonVirtualenv.defaultLocation(peer.name), peer)
            } catch {
                skipped.append("\(peer.label)-1, \(peer.label)-N: \(error)")
                return nil
            }
        }
        let pillow = peer(.pillow, at: venv)
        let pyvips = peer(.pyvips, at: pyvipsVenv)
        let vips = "/usr/bin/vipsthumbnail"
        let hasVips = FileManager.default.isExecutableFile(atPath: vips)
        if !hasVips { skipped.append("vipsthumbnail-1, vipsthumbnail-N: \(vips) is not installed (Debian: libvips-tools)") }

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-ingest-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let n = jobs, edge = size

        var results: [Group] = []
        for (format, distinct) in groups {
            let passCount = passes ?? Self.defaultPasses(files: distinct)
            let files = try Self.passes(of: distinct, count: passCount, in: scratch.appendingPathComponent("passes-\(format)"))
            var methods: [Method] = []
            if format == "jpeg" {
                methods.append(Method(name: "turbojpeg-1/8", workers: 1,
                                      note: "tjDecompress2 at the smallest DCT scale covering \(edge)px, BGRA, one reused buffer") { files in
                    try Self.turboScaledDecode(files, target: target)
                })
                methods.append(Method(name: "entropy-floor", workers: 1,
                                      note: "jpeg_read_coefficients: Huffman decode of every coefficient, no IDCT, 1 thread") { files in
                    try Self.entropyFloor(files)
                })
            }
            for workers in [1, n] where workers == 1 || n > 1 {
                methods.append(Method(name: workers == 1 ? "tessera-1" : "tessera-N", workers: workers,
                                      note: "table ingest --jobs \(workers): read + decode + resample + store, \(edge)x\(edge) bgra32") { files in
                    try await Self.tessera(files, target: target, jobs: workers, directory: scratch.appendingPathComponent("t\(workers)"))
                })
            }
            if let pillow {
                for workers in [1, n] where workers == 1 || n > 1 {
                    methods.append(Method(name: workers == 1 ? "pillow-1" : "pillow-N", workers: workers,
                                          note: "Pillow \(pillow.version): open + draft + thumbnail + load, \(workers) process(es)") { files in
                        try Self.python(pillow.python, worker: Self.pillowWorker, files: files, size: edge, processes: workers)
                    })
                }
            }
            if let pyvips {
                for workers in [1, n] where workers == 1 || n > 1 {
                    methods.append(Method(name: workers == 1 ? "pyvips-1" : "pyvips-N", workers: workers,
                                          note: "pyvips \(pyvips.version): thumbnail + write_to_memory, VIPS_CONCURRENCY=1, \(workers) process(es)") { files in
                        try Self.python(pyvips.python, worker: Self.pyvipsWorker, files: files, size: edge, processes: workers,
                                        environment: ["VIPS_CONCURRENCY": "1"])
                    })
                }
            }
            if hasVips {
                for workers in [1, n] where workers == 1 || n > 1 {
                    methods.append(Method(name: workers == 1 ? "vipsthumbnail-1" : "vipsthumbnail-N", workers: workers,
                                          note: "vipsthumbnail to .v, VIPS_CONCURRENCY=1, \(workers) process(es), start included") { files in
                        try Self.vipsthumbnail(vips, files: files, size: edge, processes: workers,
                                               output: scratch.appendingPathComponent("vips"))
                    })
                }
            }
            if let chosen = chosenMethods { methods.removeAll { !chosen.contains($0.name) } }
            var samples = Array(repeating: [Double](), count: methods.count)
            for round in 0...rounds {
                for k in 0..<methods.count {
                    let index = (k + round) % methods.count   // rotate the order from round to round
                    Terminal.progress("\(format): round \(round)/\(rounds) \(methods[index].name)")
                    let rate = try await methods[index].run(files)
                    if round > 0 { samples[index].append(rate) }   // round 0 warms the page cache and code paths
                }
            }
            let measured = zip(methods, samples).map { method, rates in
                MethodResult(method: method.name, workers: method.workers, imagesPerSecond: Summary(rates).median,
                             roundRates: rates, note: method.note)
            }
            var ratios: [String: Double] = [:]
            let rate = Dictionary(uniqueKeysWithValues: measured.map { ($0.method, $0.imagesPerSecond) })
            for (a, b) in [("tessera-1", "pillow-1"), ("tessera-N", "pillow-N"), ("tessera-1", "pyvips-1"), ("tessera-N", "pyvips-N"),
                           ("tessera-1", "vipsthumbnail-1"), ("tessera-N", "vipsthumbnail-N"), ("tessera-N", "tessera-1"),
                           ("tessera-1", "turbojpeg-1/8"), ("tessera-1", "entropy-floor")] {
                if let x = rate[a], let y = rate[b], y > 0 { ratios["\(a)/\(b)"] = x / y }
            }
            results.append(Group(format: format, files: distinct.count, passes: passCount, methods: measured, ratios: ratios))
        }
        Terminal.progress(nil)

        let report = Report(directory: directory, thumbnail: size, rounds: rounds, workers: n, cores: ParallelismLimit.coreCount,
                            pillowVersion: pillow?.version, pyvipsVersion: pyvips?.version, skipped: skipped, groups: results)
        if json { try Terminal.json(report); return }
        print("Ingest benchmark: \(directory) -> \(size)px thumbnails; N = \(n) (\(report.cores) cores); median of \(rounds) interleaved rounds")
        let names = results.flatMap { $0.methods.map(\.method) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        Terminal.table(["method"] + results.map { "\($0.format) (\($0.files) files\($0.passes > 1 ? " x \($0.passes)" : "")) img/s" } + ["what"],
                       names.map { name in
            [name] + results.map { group in
                group.methods.first { $0.method == name }.map { String(format: "%.1f", $0.imagesPerSecond) } ?? "-"
            } + [results.flatMap(\.methods).first { $0.method == name }?.note ?? ""]
        })
        let ratioNames = results.flatMap { $0.ratios.keys }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.sorted()
        print("")
        Terminal.table(["ratio"] + results.map(\.format), ratioNames.map { name in
            [name] + results.map { $0.ratios[name].map { String(format: "%.2fx", $0) } ?? "-" }
        })
        for reason in skipped { print("skipped: \(reason)") }
    }

    // MARK: Methods

    static func listRecursively(_ directory: String) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { throw ValidationError("cannot read \(directory)") }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            let path = (directory as NSString).appendingPathComponent(relative)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { files.append(path) }
        }
        return files.sorted()
    }

    /// Enough passes for 192 images a round, or for 64 MB of files if that takes fewer (a round of a few
    /// large photos stays short for the slowest methods), at least one.
    static func defaultPasses(files: [String]) -> Int {
        let bytes = files.reduce(0) { total, file in total + ((try? ImageFile(path: file).size) ?? 0) }
        let forImages = (192 + files.count - 1) / files.count
        let forBytes = bytes > 0 ? (64 << 20) / bytes + 1 : forImages
        return max(1, min(forImages, forBytes))
    }

    /// `files` taken `count` times: the files themselves once, then through symbolic links in `directory/K/`
    /// (distinct paths, so distinct table entries), in the same order each pass.
    static func passes(of files: [String], count: Int, in directory: URL) throws -> [String] {
        var all = files
        for pass in 1..<max(1, count) {
            let folder = directory.appendingPathComponent("\(pass)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (index, file) in files.enumerated() {
                let link = folder.appendingPathComponent("\(index)-\((file as NSString).lastPathComponent)").path
                try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: URL(fileURLWithPath: file).standardizedFileURL.path)
                all.append(link)
            }
        }
        return all
    }

    /// `table ingest --jobs` into a fresh table: the rate counts from the first read to the last store.
    static func tessera(_ files: [String], target: PixelSize, jobs: Int, directory: URL) async throws -> Double {
        try? FileManager.default.removeItem(at: directory)
        let table = try ImageTable(format: ImageFormat(name: "bench", style: .bgra32, size: target, maximumCount: files.count),
                                   directory: directory)
        let ingester = TableIngester(tables: [table])
        let start = Stopwatch.now()
        let outcomes = await ingester.ingest(files: files, jobs: jobs, showProgress: false)
        let seconds = Double(Stopwatch.now() - start) / 1e9
        for case .failed(let message) in outcomes { throw ValidationError("tessera: \(message)") }
        return Double(files.count) / seconds
    }

    /// libjpeg-turbo alone: header + scaled decompress, as a C program would do it.
    static func turboScaledDecode(_ files: [String], target: PixelSize) throws -> Double {
        var factorCount: Int32 = 0
        let factors = tjGetScalingFactors(&factorCount)!
        let capacity = 8192 * 8192
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let start = Stopwatch.now()
        for file in files {
            // A fresh handle per image, as a service decoding unrelated files would use.
            guard let handle = tjInitDecompress() else { throw ValidationError("tjInitDecompress failed") }
            defer { tjDestroy(handle) }
            let data = try ImageFiles.read(file)
            try data.withUnsafeBytes { raw in
                let jpeg = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
                var w: Int32 = 0, h: Int32 = 0, sub: Int32 = 0, cs: Int32 = 0
                guard tjDecompressHeader3(handle, jpeg, UInt(raw.count), &w, &h, &sub, &cs) == 0 else { throw ValidationError("header: \(file)") }
                // The smallest factor whose output still covers the target's aspect-fill size.
                let scale = max(Double(target.width) / Double(w), Double(target.height) / Double(h))
                let needW = Int32((Double(w) * scale).rounded(.up)), needH = Int32((Double(h) * scale).rounded(.up))
                var bestW = w, bestH = h
                for i in 0..<Int(factorCount) {
                    let f = factors[i]
                    let sw = (w * f.num + f.denom - 1) / f.denom, sh = (h * f.num + f.denom - 1) / f.denom
                    if sw >= needW, sh >= needH, sw * sh < bestW * bestH { bestW = sw; bestH = sh }
                }
                let pitch = bestW * 4
                guard Int(pitch) * Int(bestH) <= capacity else { throw ValidationError("too large: \(file)") }
                let result = tjDecompress2(handle, jpeg, UInt(raw.count), buffer, bestW, pitch, bestH, TJPF_BGRA.rawValue, 0)
                if result != 0 && tjGetErrorCode(handle) != TJERR_WARNING.rawValue { throw ValidationError("decode: \(file)") }
            }
        }
        return Double(files.count) / (Double(Stopwatch.now() - start) / 1e9)
    }

    /// libjpeg-turbo's entropy decoding alone (``tessera_jpeg_read_coefficients``), file read included as
    /// for the other methods: the floor of a decoder that reads every symbol.
    static func entropyFloor(_ files: [String]) throws -> Double {
        let start = Stopwatch.now()
        for file in files {
            let data = try ImageFiles.read(file)
            let failed = data.withUnsafeBytes { raw in
                tessera_jpeg_read_coefficients(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count) != 0
            }
            if failed { throw ValidationError("jpeg_read_coefficients failed: \(file)") }
        }
        return Double(files.count) / (Double(Stopwatch.now() - start) / 1e9)
    }

    /// The worker every Pillow process runs: import, report ready, wait for "go", time the loop.
    static let pillowWorker = """
    import sys, time
    from PIL import Image
    size = int(sys.argv[1]); files = sys.argv[2:]
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    for f in files:
        with Image.open(f) as im:
            im.draft('RGB', (size, size)); im.thumbnail((size, size)); im.load()
    end = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    print(start, end, flush=True)
    """

    /// The worker every pyvips process runs, as Pillow's: libvips's thumbnail (shrink-on-load where the
    /// format has it, fit inside SIZE × SIZE), its pixels computed into memory and not encoded.
    static let pyvipsWorker = """
    import sys, time
    import pyvips
    size = int(sys.argv[1]); files = sys.argv[2:]
    print("ready", flush=True)
    sys.stdin.readline()
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    for f in files:
        pyvips.Image.thumbnail(f, size, height=size).write_to_memory()
    end = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    print(start, end, flush=True)
    """

    /// A Python `worker` over `files` split round-robin across `processes` processes started together:
    /// images per second from the first process's start of work to the last one's end.
    static func python(_ python: String, worker: String, files: [String], size: Int, processes: Int,
                       environment: [String: String] = [:]) throws -> Double {
        let shares = (0..<processes).map { p in stride(from: p, to: files.count, by: processes).map { files[$0] } }.filter { !$0.isEmpty }
        let children = try shares.map { share in
            try Worker(python, ["-c", worker, "\(size)"] + share, environment: environment)
        }
        for child in children {
            guard child.readLine() == "ready" else { throw ValidationError("python worker did not start") }
        }
        for child in children { child.write("go\n") }
        var starts: [UInt64] = [], ends: [UInt64] = []
        for child in children {
            let fields = (child.readLine() ?? "").split(separator: " ").compactMap { UInt64($0) }
            try child.finish()
            guard fields.count == 2 else { throw ValidationError("python worker failed") }
            starts.append(fields[0])
            ends.append(fields[1])
        }
        return Double(files.count) / (Double(ends.max()! - starts.min()!) / 1e9)
    }

    /// vipsthumbnail over `files` split round-robin across `processes` batch processes started
    /// together; the wall time includes their start.
    static func vipsthumbnail(_ path: String, files: [String], size: Int, processes: Int, output: URL) throws -> Double {
        try? FileManager.default.removeItem(at: output)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let shares = (0..<processes).map { p in stride(from: p, to: files.count, by: processes).map { files[$0] } }.filter { !$0.isEmpty }
        let start = Stopwatch.now()
        let children = try shares.enumerated().map { index, share in
            // Each process writes into its own directory: equal file names in different folders never collide.
            let dir = output.appendingPathComponent("\(index)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            return try Worker(path, ["-s", "\(size)x\(size)", "-o", dir.path + "/%s.v"] + share, environment: ["VIPS_CONCURRENCY": "1"])
        }
        for child in children { try child.finish() }
        return Double(files.count) / (Double(Stopwatch.now() - start) / 1e9)
    }
}

/// A child process with a pipe to its standard input and one from its standard output (standard
/// error is discarded).
final class Worker {
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffer: [UInt8] = []

    init(_ path: String, _ arguments: [String], environment: [String: String]) throws {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw ValidationError("\(path) not installed") }
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Runs `path` to completion and returns its standard output, trimmed; throws on a non-zero exit.
    static func output(_ path: String, _ arguments: [String]) throws -> String {
        let worker = try Worker(path, arguments, environment: [:])
        var lines: [String] = []
        while let line = worker.readLine() { lines.append(line) }
        try worker.finish()
        return lines.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func write(_ text: String) {
        input.fileHandleForWriting.write(Data(text.utf8))
    }

    /// The next line of standard output, or `nil` at its end.
    func readLine() -> String? {
        let handle = output.fileHandleForReading
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty {
                defer { buffer.removeAll() }
                return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self)
            }
            buffer.append(contentsOf: chunk)
        }
    }

    /// Closes its input, waits for it to exit and throws unless it exited with 0.
    func finish() throws {
        try? input.fileHandleForWriting.close()
        while readLine() != nil {}
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            throw ValidationError("\(process.executableURL?.lastPathComponent ?? "?") exited with \(process.terminationStatus)")
        }
    }
}
