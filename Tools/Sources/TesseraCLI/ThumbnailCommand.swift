import ArgumentParser
import Foundation
import Tessera

/// `tessera thumbnail FILE… --size 100x100 --mode fill|fit --out DIR [--format png|jpeg|webp|avif] [--quality Q]`.
struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Decode with downscaling, draw at the given size and write image files.",
        discussion: """
        --mode fill crops to fill the size (aspect fill), fit letterboxes inside it (aspect fit), \
        stretch ignores the aspect ratio. Each output is DIR/<name>.png, .jpg, .webp or .avif. \
        --quality applies to jpeg (1-100, default 85), lossy webp (0-100, default 80) and avif \
        (0-100, default 60; libaom at speed 9, 4:2:0); --format webp --lossless writes lossless WebP. \
        Inputs may be JPEG, PNG, WebP, GIF, HEIC or AVIF. Damaged and truncated inputs decode as browsers \
        show them (a truncated file's missing rows are grey, or transparent where the format has alpha) and \
        the line of such a file says "damaged" or "truncated"; --decoding strict refuses them.
        """
    )

    /// The output formats on the command line (the formats Tessera writes).
    enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
        case png, jpeg, webp, avif
        var format: ImageFileFormat { ImageFileFormat(rawValue: rawValue) ?? .png }
    }

    /// The placement modes on the command line.
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case fill, fit, stretch
        var contentMode: ContentMode {
            switch self {
            case .fill: .fill
            case .fit: .fit
            case .stretch: .stretch
            }
        }
    }

    @Argument(help: "Image files.") var files: [String]
    @Option(help: "Thumbnail size WxH.") var size: String = "100x100"
    @Option(help: "fill (crop), fit (letterbox) or stretch.") var mode: Mode = .fill
    @Option(help: "Output directory (created if missing).") var out: String
    @Option(help: "Pixel style: bgra32, bgr32, bgr565, gray8.") var style: String = "bgra32"
    @Option(help: "Output format: png, jpeg, webp or avif.") var format: OutputFormat = .png
    @Option(help: "Quality for jpeg (1-100), lossy webp (0-100) and avif (0-100).") var quality: Int?
    @Flag(help: "Lossless WebP (with --format webp).") var lossless = false
    @Option(help: "lenient (the default: decode what browsers show) or strict (refuse damaged and truncated files).")
    var decoding: DecodingPolicyArgument = .lenient
    @Flag(help: "Print nothing per file.") var quiet = false

    func validate() throws {
        if let quality, !(0...100).contains(quality) { throw ValidationError("--quality must be 0…100") }
        if lossless, format != .webp { throw ValidationError("--lossless applies to --format webp only") }
    }

    /// The encoder for `--format`, `--quality` and `--lossless` (each codec's default quality without `--quality`).
    var encoder: ImageEncoder { ImageEncoder(format: format.format, quality: quality, lossless: lossless) }

    func run() throws {
        HeapPolicy.configureForBatch()
        guard let target = PixelSize(parsing: size) else { throw ValidationError("--size must be WxH, e.g. 100x100") }
        guard let pixelStyle = PixelStyle(rawValue: style) else { throw ValidationError("--style must be one of \(PixelStyle.allCases.map(\.rawValue).joined(separator: ", "))") }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let decoder = ImageDecoder(limits: DecodingLimits(policy: decoding.policy)), encoder = self.encoder
        var failures = 0
        var decodeSeconds = 0.0
        let start = Stopwatch.now()
        for file in files {
            do {
                let data = try ImageFiles.read(file)
                let (thumb, seconds) = try Stopwatch.time { try decoder.thumbnail(data, size: target, mode: mode.contentMode, style: pixelStyle) }
                decodeSeconds += seconds
                let path = (out as NSString).appendingPathComponent(ImageFiles.stem(file) + "." + encoder.format.fileExtension)
                try Data(try encoder.encode(thumb)).write(to: URL(fileURLWithPath: path))
                let integrity = thumb.integrity.isPartial ? ", \(thumb.integrity)" : ""
                if !quiet { print("\(file) -> \(path) (\(Terminal.ms(seconds)) ms\(integrity))") }
            } catch {
                failures += 1
                Terminal.error("\(file): error: \(error)")
            }
        }
        let total = Double(Stopwatch.now() - start) / 1e9
        let done = files.count - failures
        print(String(format: "%d thumbnails %@ (%@) in %.2f s: decode+downscale %.1f ms/image (mean), %.0f images/s overall",
                     done, target.description, mode.rawValue, total, done > 0 ? decodeSeconds * 1000 / Double(done) : 0,
                     total > 0 ? Double(done) / total : 0))
        if failures > 0 { throw ExitCode(1) }
    }
}
