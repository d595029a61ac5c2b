import ArgumentParser
import Foundation
import Tessera

/// `tessera thumbnail FILE… --size 100x100 --mode fill|fit --out DIR`.
struct ThumbnailCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail",
        abstract: "Decode with downscaling, draw at the given size and write PNG files.",
        discussion: """
        --mode fill crops to fill the size (aspect fill), fit letterboxes inside it (aspect fit), \
        stretch ignores the aspect ratio. Each output is DIR/<name>.png.
        """
    )

    /// The placement modes on the command line.
    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case fill, fit, stretch
        var contentMode: ContentMode {
            switch self {
            case .fill: .aspectFill
            case .fit: .aspectFit
            case .stretch: .fill
            }
        }
    }

    @Argument(help: "Image files.") var files: [String]
    @Option(help: "Thumbnail size WxH.") var size: String = "100x100"
    @Option(help: "fill (crop), fit (letterbox) or stretch.") var mode: Mode = .fill
    @Option(help: "Output directory (created if missing).") var out: String
    @Option(help: "Pixel style: bgra32, bgr32, bgr565, gray8.") var style: String = "bgra32"
    @Flag(help: "Print nothing per file.") var quiet = false

    func run() throws {
        guard let target = PixelSize(parsing: size) else { throw ValidationError("--size must be WxH, e.g. 100x100") }
        guard let pixelStyle = PixelStyle(rawValue: style) else { throw ValidationError("--style must be one of \(PixelStyle.allCases.map(\.rawValue).joined(separator: ", "))") }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let decoder = ImageDecoder()
        let encoder = PNGEncoder()
        var failures = 0
        var decodeSeconds = 0.0
        let start = Stopwatch.now()
        for file in files {
            do {
                let data = try ImageFiles.read(file)
                let (thumb, seconds) = try Stopwatch.time { try decoder.thumbnail(data, size: target, mode: mode.contentMode, style: pixelStyle) }
                decodeSeconds += seconds
                let path = (out as NSString).appendingPathComponent(ImageFiles.stem(file) + ".png")
                try Data(try encoder.encode(thumb)).write(to: URL(fileURLWithPath: path))
                if !quiet { print("\(file) -> \(path) (\(Terminal.ms(seconds)) ms)") }
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
