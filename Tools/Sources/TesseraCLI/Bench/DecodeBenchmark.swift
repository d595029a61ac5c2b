import ArgumentParser
import Foundation
import Tessera

/// `tessera bench decode DIR [--json]`: full decode, downscaled decode and probe per format and size class.
struct DecodeBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Medians of full decode, decode downscaled to a thumbnail, full decode + resize, and probe.",
        discussion: """
        For each image in DIR: probe (header only), full decode to BGRA, decode downscaled to --size \
        (codec cheap path + box filter), and the obvious alternative: full decode followed by a resize \
        to --size. Results are grouped by format and size class; times are medians of per-file medians. \
        Every format the library decodes is measured (JPEG, PNG, WebP, GIF, HEIC, AVIF) when DIR holds it; \
        --transcode webp,avif also measures each image re-encoded by the library (WebPEncoder q80, \
        AVIFEncoder q60 speed 8, a fixed setting so that rows stay comparable) into a temporary directory, so one directory of JPEGs gives a row per format.
        """
    )

    @Argument(help: "Directory of images.") var directory: String
    @Option(help: "Timed repetitions per file and operation.") var repetitions = 5
    @Option(help: "Thumbnail size WxH.") var size = "100x100"
    @Option(help: "Only the first N files (0 = all).") var limit = 0
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Also measure each image re-encoded as these formats (comma-separated: webp, avif).") var transcode: String?

    struct FileResult: Codable {
        var file: String
        var format: String
        var width: Int
        var height: Int
        var megapixels: Double
        var sizeClass: String
        var probeSeconds: Double
        var fullDecodeSeconds: Double
        var downscaledDecodeSeconds: Double
        var cheapPathOnlySeconds: Double
        var fullDecodePlusResizeSeconds: Double
    }

    struct GroupResult: Codable {
        var format: String
        var sizeClass: String
        var files: Int
        var probeMicroseconds: Double
        var fullDecodeMs: Double
        var fullDecodeMegapixelsPerSecond: Double
        var downscaledDecodeMs: Double
        var downscaledDecodeMegapixelsPerSecond: Double
        var cheapPathOnlyMs: Double
        var fullDecodePlusResizeMs: Double
        var speedupOfDownscaledOverFullPlusResize: Double
    }

    struct Report: Codable {
        var directory: String
        var thumbnailSize: String
        var repetitions: Int
        var groups: [GroupResult]
        var files: [FileResult]
        var failures: [String]
    }

    static func sizeClass(megapixels: Double) -> String {
        switch megapixels {
        case ..<0.3: "<0.3MP"
        case ..<1: "0.3-1MP"
        case ..<4: "1-4MP"
        default: ">=4MP"
        }
    }

    func run() throws {
        guard let target = PixelSize(parsing: size) else { throw ValidationError("--size must be WxH") }
        var files = try ImageFiles.list(in: directory)
        if limit > 0 { files = Array(files.prefix(limit)) }
        guard !files.isEmpty else { throw ValidationError("no images in \(directory)") }
        let decoder = ImageDecoder()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-decode-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        if let transcode {
            files += try Self.transcoded(files, into: scratch, formats: transcode.split(separator: ",").map(String.init), decoder: decoder)
        }
        var results: [FileResult] = []
        var failures: [String] = []
        var progress = ProgressBar(total: files.count, label: "bench decode")
        for (index, file) in files.enumerated() {
            progress.update(index)
            do {
                let data = try ImageFiles.read(file)
                let info = try decoder.probe(data)
                let probeBatch = 200
                let probe = Summary(try Stopwatch.samples(repetitions: repetitions) {
                    for _ in 0..<probeBatch { _ = try decoder.probe(data) }
                }).median / Double(probeBatch)
                let full = Summary(try Stopwatch.samples(repetitions: repetitions) { _ = try decoder.decode(data) }).median
                let thumb = Summary(try Stopwatch.samples(repetitions: repetitions) {
                    _ = try decoder.thumbnail(data, size: target, mode: .fill)
                }).median
                let covering = ContentMode.fill.coveringSize(of: info.displaySize, in: target)
                let cheap = Summary(try Stopwatch.samples(repetitions: repetitions) {
                    _ = try decoder.decode(data, minimumSize: covering)
                }).median
                let fullResize = Summary(try Stopwatch.samples(repetitions: repetitions) {
                    let big = try decoder.decode(data)
                    _ = try Bitmap.drawing(size: target) { try $0.draw(big, in: $0.bounds, mode: .fill) }
                }).median
                let mp = Double(info.width * info.height) / 1e6
                results.append(FileResult(file: file, format: info.format.rawValue, width: info.width, height: info.height,
                                          megapixels: mp, sizeClass: Self.sizeClass(megapixels: mp), probeSeconds: probe,
                                          fullDecodeSeconds: full, downscaledDecodeSeconds: thumb, cheapPathOnlySeconds: cheap,
                                          fullDecodePlusResizeSeconds: fullResize))
            } catch {
                failures.append("\(file): \(error)")
            }
        }
        progress.finish()
        let groups = Self.group(results)
        let report = Report(directory: directory, thumbnailSize: target.description, repetitions: repetitions,
                            groups: groups, files: results, failures: failures)
        if json { try Terminal.json(report); return }
        print("Decode benchmark: \(results.count) images from \(directory), thumbnails \(target), medians of \(repetitions) runs")
        Terminal.table(
            ["format", "size", "files", "probe µs", "full ms", "full MP/s", "thumb ms", "thumb MP/s", "scaled decode only ms", "full+resize ms", "thumb speedup"],
            groups.map { g in
                [g.format, g.sizeClass, "\(g.files)", String(format: "%.1f", g.probeMicroseconds), String(format: "%.2f", g.fullDecodeMs),
                 String(format: "%.0f", g.fullDecodeMegapixelsPerSecond), String(format: "%.2f", g.downscaledDecodeMs),
                 String(format: "%.0f", g.downscaledDecodeMegapixelsPerSecond), String(format: "%.2f", g.cheapPathOnlyMs), String(format: "%.2f", g.fullDecodePlusResizeMs),
                 String(format: "%.1fx", g.speedupOfDownscaledOverFullPlusResize)]
            })
        let big = results.filter { $0.format == "jpeg" && $0.megapixels >= 1 }
        if !big.isEmpty {
            let thumb = Summary(big.map(\.downscaledDecodeSeconds)).median
            let alt = Summary(big.map(\.fullDecodePlusResizeSeconds)).median
            print(String(format: "JPEG >= 1 MP (%d files): downscaled decode %.2f ms vs full decode + resize %.2f ms: %.1fx faster; %.0f thumbnails/s",
                         big.count, thumb * 1000, alt * 1000, alt / thumb, 1 / thumb))
        }
        for failure in failures { Terminal.error("failed: \(failure)") }
    }

    /// Each of `files` decoded and re-encoded as each of `formats` (`webp`: WebPEncoder q80, `avif`:
    /// AVIFEncoder q60 speed 8) into `directory`; the new files' paths.
    static func transcoded(_ files: [String], into directory: URL, formats: [String], decoder: ImageDecoder) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var written: [String] = []
        var progress = ProgressBar(total: files.count * formats.count, label: "transcode")
        for (index, file) in files.enumerated() {
            let image = try decoder.decode(try ImageFiles.read(file))
            for format in formats {
                progress.update(written.count)
                let encoder: any ImageEncoding
                switch format {
                case "webp": encoder = WebPEncoder(quality: 80)
                case "avif": encoder = AVIFEncoder(quality: 60, speed: 8)
                default: throw ValidationError("--transcode takes webp and avif, not \(format)")
                }
                let path = directory.appendingPathComponent("\(index)-" + ImageFiles.stem(file) + "." + format).path
                try Data(try encoder.encode(image)).write(to: URL(fileURLWithPath: path))
                written.append(path)
            }
        }
        progress.finish()
        return written
    }

    static func group(_ results: [FileResult]) -> [GroupResult] {
        let keys = Dictionary(grouping: results) { "\($0.format)|\($0.sizeClass)" }
        return keys.values.map { files in
            let mp = Summary(files.map(\.megapixels)).median
            let full = Summary(files.map(\.fullDecodeSeconds)).median
            let thumb = Summary(files.map(\.downscaledDecodeSeconds)).median
            let alt = Summary(files.map(\.fullDecodePlusResizeSeconds)).median
            return GroupResult(format: files[0].format, sizeClass: files[0].sizeClass, files: files.count,
                               probeMicroseconds: Summary(files.map(\.probeSeconds)).median * 1e6,
                               fullDecodeMs: full * 1000, fullDecodeMegapixelsPerSecond: mp / full,
                               downscaledDecodeMs: thumb * 1000, downscaledDecodeMegapixelsPerSecond: mp / thumb,
                               cheapPathOnlyMs: Summary(files.map(\.cheapPathOnlySeconds)).median * 1000,
                               fullDecodePlusResizeMs: alt * 1000, speedupOfDownscaledOverFullPlusResize: alt / thumb)
        }.sorted { ($0.format, $0.sizeClass) < ($1.format, $1.sizeClass) }
    }
}
