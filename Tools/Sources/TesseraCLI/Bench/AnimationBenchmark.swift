import ArgumentParser
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging

/// `tessera bench animation [--frames 50] [--size 200] [--json]`: the cost of an animated thumbnail (an animated
/// GIF resized to --size px wide, every frame, written as GIF and as animated WebP), Tessera against Pillow
/// in the same run, one core each.
struct AnimationBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "animation",
        abstract: "Animated thumbnails: an animated GIF of --frames frames resized to --size px, written as GIF and as WebP, Tessera against Pillow.",
        discussion: """
        The source is made here: --frames frames of 640×480, 80 ms each, looping for ever, written as a GIF by \
        Tessera's GIFEncoder into a temporary directory. The frames are a gradient with a square that moves \
        across it, or with --photos DIR the JPEG and PNG photographs of DIR (searched recursively, in name \
        order, cropped to fill 640×480 and enlarged when smaller, repeated as needed): a slideshow of real photographs. \
        Each method makes the whole thumbnail from the file's bytes in memory, on one core, --rounds times \
        after one warm-up, and reports the median milliseconds and the output's bytes:
          tessera-gif, tessera-webp   ImageDecoder.renderAnimation (every frame composited, resized with one \
        geometry), then ImageEncoder's GIF (giflib's median cut) or WebP (libwebpmux, quality 80)
          pillow-gif, pillow-webp     Pillow: Image.open, every frame of ImageSequence converted to RGBA and \
        resized (its default filter, bicubic), then save(save_all=True) with the durations and the loop count; \
        WebP at quality 80
        Pillow comes from the virtualenv `tessera bench peers` makes (--venv, default .build/pillow-venv next to \
        this binary), else Debian's python3-pil (/usr/bin/python3); without either it is left out and says so. \
        Ratios: "pillow/tessera" per format, how many times faster Tessera is.
        """
    )

    @Option(help: "Frames of the source GIF.") var frames = 50
    @Option(help: "Make the frames from the photographs of this directory (default: a moving square on a gradient).")
    var photos: String?
    @Option(help: "Width of the thumbnail in pixels.") var size = 200
    @Option(help: "Measured rounds (after one warm-up).") var rounds = 5
    @Option(help: "The Pillow virtualenv (default: .build/pillow-venv next to this binary).") var venv: String?
    @Flag(help: "Print JSON.") var json = false

    struct Result: Codable {
        var method: String
        var milliseconds: Double
        var bytes: Int
    }

    struct Report: Codable {
        var frames: Int
        var size: Int
        var rounds: Int
        var pillowVersion: String?
        var skipped: [String]
        var results: [Result]
        var ratios: [String: Double]
    }

    func validate() throws {
        if frames < 1 || frames > 1_000 { throw ValidationError("--frames is 1…1000") }
        if size < 1 || size > 640 { throw ValidationError("--size is 1…640") }
        if rounds < 1 { throw ValidationError("--rounds must be at least 1") }
    }

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-bench-animation-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("source.gif")
        let animation = try photos.map { try Self.slideshow(of: $0, frames: frames) } ?? Self.source(frames: frames)
        let data = Data(try GIFEncoder().encode(animation))
        try data.write(to: source)

        var results: [Result] = []
        let decoder = ImageDecoder()
        for format in [ImageFileFormat.gif, .webp] {
            var bytes = 0
            let seconds = try Self.median(rounds) {
                let animation = try decoder.renderAnimation(data, processing: ImageProcessing(width: size))
                bytes = try ImageEncoder(format: format, quality: 80).encode(animation).count
            }
            results.append(Result(method: "tessera-\(format.rawValue)", milliseconds: seconds * 1000, bytes: bytes))
        }
        var skipped: [String] = []
        var version: String?
        if let python = Self.pillow(venv, skipped: &skipped) {
            version = python.version
            for format in ["gif", "webp"] {
                let output = try Worker.output(python.path, ["-c", Self.pillowScript, source.path, String(size), format, String(rounds)])
                let fields = output.split(separator: " ")
                guard fields.count == 2, let seconds = Double(fields[0]), let bytes = Int(fields[1]) else {
                    throw ValidationError("Pillow's worker answered \(output)")
                }
                results.append(Result(method: "pillow-\(format)", milliseconds: seconds * 1000, bytes: bytes))
            }
        }
        var ratios: [String: Double] = [:]
        for format in ["gif", "webp"] {
            if let tessera = results.first(where: { $0.method == "tessera-\(format)" }), let pillow = results.first(where: { $0.method == "pillow-\(format)" }) {
                ratios["pillow/tessera \(format)"] = pillow.milliseconds / tessera.milliseconds
            }
        }
        let report = Report(frames: frames, size: size, rounds: rounds, pillowVersion: version, skipped: skipped, results: results, ratios: ratios)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
            return
        }
        print("\(frames)-frame GIF of 640×480 (\(photos.map { "photographs of \($0)" } ?? "a moving square")) to \(size) px wide, "
              + "median of \(rounds) rounds, one core")
        for result in results {
            print("  \(result.method.padding(toLength: 14, withPad: " ", startingAt: 0)) \(String(format: "%8.1f", result.milliseconds)) ms  \(result.bytes) bytes")
        }
        for (name, ratio) in ratios.sorted(by: { $0.key < $1.key }) { print("  \(name): \(String(format: "%.2f", ratio))×") }
        for line in skipped { print("  skipped: \(line)") }
    }

    /// `frames` frames of 640×480: a diagonal gradient with a 120-pixel square that moves across it.
    static func source(frames: Int) -> Animation {
        let width = 640, height = 480
        let list = (0..<frames).map { index -> Animation.Frame in
            let left = (width - 120) * index / max(1, frames - 1), top = (height - 120) / 2
            let image = Bitmap(width: width, height: height, style: .bgra32) { view in
                for y in 0..<height {
                    let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width {
                        let inside = x >= left && x < left + 120 && y >= top && y < top + 120
                        row[x * 4] = inside ? 40 : UInt8(x * 255 / width)
                        row[x * 4 + 1] = inside ? 200 : UInt8(y * 255 / height)
                        row[x * 4 + 2] = inside ? 240 : UInt8((x + y) * 255 / (width + height))
                        row[x * 4 + 3] = 255
                    }
                }
            }
            return Animation.Frame(image: image, duration: .milliseconds(80))
        }
        return Animation(canvasSize: PixelSize(width: width, height: height), frames: list, loopCount: 0)
    }

    /// `frames` frames of 640×480: the JPEG and PNG photographs of `directory` in name order, each cropped to
    /// fill, repeated as needed.
    static func slideshow(of directory: String, frames: Int) throws -> Animation {
        let files = try IngestBenchmark.listRecursively(directory)
            .filter { ["jpg", "jpeg", "png"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        guard !files.isEmpty else { throw ValidationError("no JPEG or PNG files in \(directory)") }
        let fill = ImageProcessing(width: 640, height: 480, mode: .fill, enlarge: true)   // small photographs too
        let pictures = try files.prefix(frames).map { try ImageDecoder().render(try ImageFile.contents(of: $0), processing: fill) }
        return Animation(canvasSize: PixelSize(width: 640, height: 480),
                         frames: (0..<frames).map { Animation.Frame(image: pictures[$0 % pictures.count], duration: .milliseconds(80)) },
                         loopCount: 0)
    }

    /// The median seconds of `rounds` runs of `body`, after one warm-up run.
    static func median(_ rounds: Int, _ body: () throws -> Void) throws -> Double {
        try body()
        var samples: [Double] = []
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            try body()
            let (seconds, attoseconds) = (ContinuousClock.now - start).components
            samples.append(Double(seconds) + Double(attoseconds) / 1e18)
        }
        return samples.sorted()[samples.count / 2]
    }

    /// Pillow's interpreter and version: the virtualenv's, else Debian's python3-pil; `nil` (and a line in
    /// `skipped`) with neither.
    static func pillow(_ venv: String?, skipped: inout [String]) -> (path: String, version: String)? {
        let location = venv.map { URL(fileURLWithPath: $0) } ?? PythonVirtualenv.defaultLocation(PythonVirtualenv.Peer.pillow.name)
        if let found = try? PythonVirtualenv.existing(location, .pillow) { return (found.python, found.version) }
        if let version = try? Worker.output("/usr/bin/python3", ["-c", "import PIL; print(PIL.__version__)"]) {
            return ("/usr/bin/python3", version)
        }
        skipped.append("pillow-gif, pillow-webp: no Pillow (tessera bench peers --only pillow, or Debian's python3-pil)")
        return nil
    }

    /// Pillow's side: the median seconds of ROUNDS runs after a warm-up, and the last output's bytes.
    static let pillowScript = """
        import io, sys, time
        from PIL import Image, ImageSequence
        path, size, fmt, rounds = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
        data = open(path, "rb").read()
        def thumbnail():
            im = Image.open(io.BytesIO(data))
            frames, durations = [], []
            for frame in ImageSequence.Iterator(im):
                durations.append(frame.info.get("duration", 0))
                rgba = frame.convert("RGBA")
                frames.append(rgba.resize((size, max(1, round(rgba.height * size / rgba.width)))))
            out = io.BytesIO()
            options = {"quality": 80} if fmt == "webp" else {}
            frames[0].save(out, format=fmt.upper(), save_all=True, append_images=frames[1:], duration=durations,
                           loop=im.info.get("loop", 0), **options)
            return len(out.getvalue())
        thumbnail()
        samples = []
        for _ in range(rounds):
            start = time.perf_counter()
            size_out = thumbnail()
            samples.append(time.perf_counter() - start)
        samples.sort()
        print(samples[len(samples) // 2], size_out)
        """
}
