import ArgumentParser
import ToolsCairo
import Foundation
import Tessera

/// `tessera bench formats [--json] [--plot formats.png]`: the Image I/O chapter's experiment — how
/// long loading (reading the file) and decoding take for PNG, JPEG, WebP and AVIF from 2048×1536
/// down to 32×24, and how large the files are, for a photograph and for a smooth gradient.
struct FormatsBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "formats",
        abstract: "File size, load and decode time of PNG, JPEG, WebP and AVIF at 2048x1536 … 32x24, for a photograph and a gradient.",
        discussion: """
        The command generates its test files: a photograph (the 4:3-est JPEG of at least 2048x1536 under \
        --images, or --photo) cropped and scaled to each size, and a rainbow gradient drawn at each size; \
        each is encoded as PNG (libpng), JPEG (TurboJPEG, --quality, 4:2:0), lossy WebP (libwebp, \
        --webp-quality) and AVIF (libheif + libaom, --avif-quality, --avif-speed, 4:2:0) under --work-dir; \
        AVIF files are decoded by libheif (dav1d). "load" reads the file (from the page cache; "cold load" first \
        evicts it with posix_fadvise(DONTNEED)); "decode" decodes it to full-size BGRA. Times are medians \
        of --repetitions samples, each averaging enough calls to last at least 20 ms.
        """
    )

    /// The formats measured, in table order.
    static let formats = ["png", "jpeg", "webp", "avif"]

    static let sizes = [(2048, 1536), (1024, 768), (512, 384), (256, 192), (128, 96), (64, 48), (32, 24)]

    @Option(help: "Directory of photographs to pick the photo from.") var images = "/usr/share/backgrounds/mate"
    @Option(help: "Use this photograph.") var photo: String?
    @Option(help: "Where the encoded test files are written (default $XDG_CACHE_HOME/tessera-demo/formats).") var workDir: String?
    @Option(help: "JPEG quality.") var quality = 85
    @Option(help: "WebP (lossy) quality.") var webpQuality = 80
    @Option(help: "AVIF quality (0-100).") var avifQuality = 60
    @Option(help: "AVIF encoder speed (libaom, 0-9).") var avifSpeed = 8
    @Option(help: "Samples per measurement.") var repetitions = 5
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Write a chart (PNG).") var plot: String?

    /// One file: an image at one size in one format.
    struct Row: Codable {
        var image: String
        var size: String
        var pixels: Int
        var format: String
        var bytes: Int
        var loadMs: Double
        var coldLoadMs: Double
        var decodeMs: Double
        var totalMs: Double { loadMs + decodeMs }
        enum CodingKeys: String, CodingKey { case image, size, pixels, format, bytes, loadMs, coldLoadMs, decodeMs }
    }

    struct Report: Codable {
        var photo: String
        var jpegQuality: Int
        var webpQuality: Int
        var avifQuality: Int
        var rows: [Row]
    }

    func run() throws {
        let work = workDir ?? ImageTable.defaultDirectory(appName: "tessera-demo").deletingLastPathComponent()
            .appendingPathComponent("formats").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let photoPath = try photo ?? Self.pickPhoto(in: images)
        let master = try Self.photoMaster(photoPath)
        let encoders: [(String, (Bitmap) throws -> [UInt8])] = [
            ("png", { try PNGEncoder().encode($0) }),
            ("jpeg", { try JPEGEncoder(quality: quality).encode($0) }),
            ("webp", { try WebPEncoder(quality: webpQuality).encode($0) }),
            ("avif", { try AVIFEncoder(quality: avifQuality, speed: avifSpeed).encode($0) }),
        ]
        var rows: [Row] = []
        var progress = ProgressBar(total: 2 * Self.sizes.count * encoders.count, label: "bench formats")
        let decoder = ImageDecoder()
        for kind in ["photo", "gradient"] {
            for (w, h) in Self.sizes {
                let size = PixelSize(width: w, height: h)
                let bitmap = kind == "photo"
                    ? try Bitmap.drawing(size: size, style: .bgr32) { try $0.draw(master, in: $0.bounds, mode: .fill) }
                    : try Self.gradient(size)
                for (format, encode) in encoders {
                    progress.update(rows.count)
                    let path = (work as NSString).appendingPathComponent("\(kind)-\(size).\(format)")
                    let encoded = try encode(bitmap)
                    try Data(encoded).write(to: URL(fileURLWithPath: path))
                    let url = URL(fileURLWithPath: path)
                    let load = try Self.median(repetitions) { _ = try Data(contentsOf: url) }
                    let cold = try Self.coldLoad(path, repetitions: repetitions)
                    let data = try Data(contentsOf: url)
                    let decode = try Self.median(repetitions) { _ = try decoder.decode(data) }
                    rows.append(Row(image: kind, size: size.description, pixels: w * h, format: format, bytes: encoded.count,
                                    loadMs: load * 1000, coldLoadMs: cold * 1000, decodeMs: decode * 1000))
                }
            }
        }
        progress.finish()
        let report = Report(photo: photoPath, jpegQuality: quality, webpQuality: webpQuality, avifQuality: avifQuality, rows: rows)
        if let plot { try Data(PNGEncoder().encode(FormatsPlot.draw(report))).write(to: URL(fileURLWithPath: plot)) }
        if json { try Terminal.json(report); return }
        print("Format study: photo \(photoPath) and a rainbow gradient; JPEG q\(quality) 4:2:0, WebP lossy q\(webpQuality), AVIF q\(avifQuality) speed \(avifSpeed), PNG (libpng default)")
        print("load = read the file (page cache), cold = after posix_fadvise(DONTNEED), decode = full-size BGRA; medians, ms; \(DemoReport.machine())")
        var table: [[String]] = []
        for kind in ["photo", "gradient"] {
            for (w, h) in Self.sizes {
                let size = "\(w)x\(h)"
                var line = [kind, size]
                for format in Self.formats {
                    guard let r = rows.first(where: { $0.image == kind && $0.size == size && $0.format == format }) else { continue }
                    line += [Self.kb(r.bytes), String(format: "%.3f", r.loadMs), String(format: "%.3f", r.coldLoadMs),
                             String(format: "%.3f", r.decodeMs), String(format: "%.3f", r.totalMs)]
                }
                let best = rows.filter { $0.image == kind && $0.size == size }.min { $0.totalMs < $1.totalMs }
                table.append(line + [best?.format ?? ""])
            }
        }
        var header = ["image", "size"]
        for f in ["PNG", "JPEG", "WebP", "AVIF"] { header += ["\(f) KB", "load", "cold", "decode", "total"] }
        Terminal.table(header + ["fastest"], table)
        if let plot { print("chart: \(plot)") }
    }

    static func kb(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1024) }

    /// Median of `repetitions` samples; each sample averages as many calls as fit in 20 ms (at least one).
    static func median(_ repetitions: Int, _ body: () throws -> Void) throws -> Double {
        try body()   // warm-up
        var samples: [Double] = []
        for _ in 0..<max(1, repetitions) {
            var calls = 0
            let start = Stopwatch.now()
            var elapsed: UInt64 = 0
            repeat {
                try body()
                calls += 1
                elapsed = Stopwatch.now() - start
            } while elapsed < 20_000_000
            samples.append(Double(elapsed) / 1e9 / Double(calls))
        }
        return Summary(samples).median
    }

    /// Median time to read `path` right after asking the kernel to drop its cached pages (if the
    /// kernel keeps them anyway, this measures the page cache).
    static func coldLoad(_ path: String, repetitions: Int) throws -> Double {
        var samples: [Double] = []
        for _ in 0..<max(1, repetitions) {
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                fdatasync(fd)
                posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
                close(fd)
            }
            let (_, seconds) = try Stopwatch.time { try Data(contentsOf: URL(fileURLWithPath: path)) }
            samples.append(seconds)
        }
        return Summary(samples).median
    }

    /// The JPEG under `directory` of at least 2048x1536 whose aspect ratio is closest to 4:3.
    static func pickPhoto(in directory: String) throws -> String {
        let decoder = ImageDecoder()
        let candidates = DemoSources.photographs(in: directory).filter { ["jpg", "jpeg"].contains(($0 as NSString).pathExtension.lowercased()) }
            .compactMap { path -> (String, Double)? in
                guard let info = try? decoder.probe(ImageFiles.read(path)), info.width >= 2048, info.height >= 1536 else { return nil }
                return (path, abs(Double(info.width) / Double(info.height) - 4.0 / 3.0))
            }
        guard let best = candidates.min(by: { ($0.1, $0.0) < ($1.1, $1.0) }) else {
            throw ValidationError("no JPEG of at least 2048x1536 under \(directory); pass --photo")
        }
        return best.0
    }

    /// The photograph cropped to 4:3 at 2048x1536 (every smaller size is scaled from it).
    static func photoMaster(_ path: String) throws -> Bitmap {
        let photo = try ImageDecoder().decode(ImageFiles.read(path), minimumSize: PixelSize(width: 2048, height: 1536))
        return try Bitmap.drawing(size: PixelSize(width: 2048, height: 1536), style: .bgr32) {
            try $0.draw(photo, in: $0.bounds, mode: .fill)
        }
    }

    /// A smooth horizontal rainbow, darkening towards the bottom.
    static func gradient(_ size: PixelSize) throws -> Bitmap {
        try Bitmap.drawing(size: size, style: .bgr32) { context in
            let cr = context.cairo
            let w = Double(size.width), h = Double(size.height)
            let rainbow = cairo_pattern_create_linear(0, 0, w, 0)!
            let stops: [(Double, Double, Double)] = [(1, 0, 0), (1, 0.5, 0), (1, 1, 0), (0, 0.8, 0), (0, 0.4, 1), (0.3, 0, 0.6), (0.6, 0, 0.8)]
            for (i, c) in stops.enumerated() {
                cairo_pattern_add_color_stop_rgb(rainbow, Double(i) / Double(stops.count - 1), c.0, c.1, c.2)
            }
            cairo_set_source(cr, rainbow)
            cairo_paint(cr)
            cairo_pattern_destroy(rainbow)
            let shade = cairo_pattern_create_linear(0, 0, 0, h)!
            cairo_pattern_add_color_stop_rgba(shade, 0, 0, 0, 0, 0)
            cairo_pattern_add_color_stop_rgba(shade, 1, 0, 0, 0, 0.6)
            cairo_set_source(cr, shade)
            cairo_paint(cr)
            cairo_pattern_destroy(shade)
        }
    }
}
