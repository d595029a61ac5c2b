import ArgumentParser
import CTurboJPEG
import Foundation
import Tessera

/// `tessera bench ingest DIR [--json]`: decode + downscale + store into a table, side by side with
/// libjpeg-turbo's own 1/8-scale decode (the ceiling), Pillow and vipsthumbnail, in one run, one core.
struct IngestBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Thumbnail ingest rate (images/s, one core) against libjpeg-turbo's 1/8 decode, Pillow and vipsthumbnail.",
        discussion: """
        Methods, each over the same JPEG files, single-threaded, files read from the page cache:
          turbojpeg-1/8   tjDecompress2 at the smallest scale covering the thumbnail (the ceiling)
          tessera-ingest  read, probe, DCT-scaled decode, box-filter resample, store into an image table
          pillow          /usr/bin/python3: Image.open, draft('RGB', size), thumbnail(size), load()
          vipsthumbnail   one batch invocation (VIPS_CONCURRENCY=1), writing PNGs to a temp dir
        Pillow and vipsthumbnail run only where installed. Each rate is the median of --repetitions passes.
        """
    )

    @Argument(help: "Directory of JPEG photographs.") var directory: String
    @Option(help: "Thumbnail edge in pixels.") var size = 100
    @Option(help: "Passes per method.") var repetitions = 5
    @Option(help: "Python with Pillow.") var python = "/usr/bin/python3"
    @Flag(help: "Print JSON.") var json = false

    struct MethodResult: Codable {
        var method: String
        var imagesPerSecond: Double
        var passes: [Double]
        var ratioToCeiling: Double
        var note: String
    }

    struct Report: Codable {
        var directory: String
        var files: Int
        var thumbnail: Int
        var repetitions: Int
        var results: [MethodResult]
    }

    func run() throws {
        let files = try ImageFiles.list(in: directory).filter { $0.lowercased().hasSuffix(".jpg") || $0.lowercased().hasSuffix(".jpeg") }
        guard !files.isEmpty else { throw ValidationError("no JPEG files in \(directory)") }
        let target = PixelSize(width: size, height: size)
        var rates: [(String, [Double], String)] = []

        rates.append(("turbojpeg-1/8", try passes { try Self.turboScaledDecode(files, target: target) },
                      "libjpeg-turbo tjDecompress2 at the smallest DCT scale covering \(size)px, BGRA, into one reused buffer"))

        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-ingest-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        rates.append(("tessera-ingest", try passes {
            try? FileManager.default.removeItem(at: scratch)
            let table = try ImageTable(format: ImageFormat(name: "bench", style: .bgra32, size: target, maximumCount: files.count),
                                       directory: scratch)
            let ingester = TableIngester(tables: [table])
            let start = Stopwatch.now()
            for file in files {
                let data = try ImageFiles.read(file)
                try ingester.ingest(data: data, entityID: UUID(hashing: file), sourceID: UUID(hashing: "v1"), into: [table])
            }
            return Double(files.count) / (Double(Stopwatch.now() - start) / 1e9)
        }, "read + probe + DCT-scaled decode + box-filter resample (aspect fill) + store into a \(size)x\(size) bgra32 table"))

        if let pillow = try? passes({ try Self.pillow(python: python, files: files, size: size) }) {
            rates.append(("pillow", pillow, "\(python): open + draft('RGB') + thumbnail + load, in-process timing"))
        }
        if let vips = try? passes({ try Self.vipsthumbnail(files: files, size: size) }) {
            rates.append(("vipsthumbnail", vips, "one batch process, VIPS_CONCURRENCY=1, PNG output, process start included"))
        }

        let ceiling = Summary(rates[0].1).median
        let results = rates.map { name, samples, note in
            MethodResult(method: name, imagesPerSecond: Summary(samples).median, passes: samples,
                         ratioToCeiling: Summary(samples).median / ceiling, note: note)
        }
        let report = Report(directory: directory, files: files.count, thumbnail: size, repetitions: repetitions, results: results)
        if json { try Terminal.json(report); return }
        print("Ingest benchmark: \(files.count) JPEGs from \(directory) -> \(size)px thumbnails, one core, median of \(repetitions) passes")
        Terminal.table(["method", "images/s", "vs ceiling", "what"], results.map {
            [$0.method, String(format: "%.0f", $0.imagesPerSecond), String(format: "%.0f%%", $0.ratioToCeiling * 100), $0.note]
        })
        if let ours = results.first(where: { $0.method == "tessera-ingest" }) {
            for other in results where other.method == "pillow" || other.method == "vipsthumbnail" {
                print(String(format: "tessera-ingest is %.2fx %@", ours.imagesPerSecond / other.imagesPerSecond, other.method))
            }
        }
    }

    private func passes(_ body: () throws -> Double) throws -> [Double] {
        _ = try body()  // warm-up: page cache, code paths
        return try (0..<repetitions).map { _ in try body() }
    }

    /// libjpeg-turbo alone: header + scaled decompress, as a C program would do it.
    static func turboScaledDecode(_ files: [String], target: PixelSize) throws -> Double {
        var factorCount: Int32 = 0
        let factors = tjGetScalingFactors(&factorCount)!
        let capacity = 4096 * 4096
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
                guard Int(pitch * bestH) <= capacity else { throw ValidationError("too large: \(file)") }
                let result = tjDecompress2(handle, jpeg, UInt(raw.count), buffer, bestW, pitch, bestH, TJPF_BGRA.rawValue, 0)
                if result != 0 && tjGetErrorCode(handle) != TJERR_WARNING.rawValue { throw ValidationError("decode: \(file)") }
            }
        }
        return Double(files.count) / (Double(Stopwatch.now() - start) / 1e9)
    }

    static func pillow(python: String, files: [String], size: Int) throws -> Double {
        let script = """
        import sys, time
        from PIL import Image
        size = int(sys.argv[1]); files = sys.argv[2:]
        start = time.perf_counter()
        for f in files:
            im = Image.open(f); im.draft('RGB', (size, size)); im.thumbnail((size, size)); im.load()
        print(len(files) / (time.perf_counter() - start))
        """
        let output = try Self.runProcess(python, ["-c", script, "\(size)"] + files, environment: [:])
        guard let rate = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw ValidationError("pillow: \(output)") }
        return rate
    }

    static func vipsthumbnail(files: [String], size: Int) throws -> Double {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-vips-\(getpid())")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        let start = Stopwatch.now()
        _ = try runProcess("/usr/bin/vipsthumbnail", ["-s", "\(size)x\(size)", "-o", out.path + "/%s.png"] + files,
                           environment: ["VIPS_CONCURRENCY": "1"])
        return Double(files.count) / (Double(Stopwatch.now() - start) / 1e9)
    }

    /// Runs a program to completion and returns its standard output; throws on a non-zero exit.
    static func runProcess(_ path: String, _ arguments: [String], environment: [String: String]) throws -> String {
        guard FileManager.default.isExecutableFile(atPath: path) else { throw ValidationError("\(path) not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw ValidationError("\(path) exited with \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }
}
