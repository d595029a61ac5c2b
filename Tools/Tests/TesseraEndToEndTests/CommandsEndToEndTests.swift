import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera probe` and `tessera thumbnail` (release build) on real photographs: what they report and
/// write is checked against the Tessera library run on the same files in this process.
@Suite("release tessera probe and thumbnail on real photographs",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct CommandsEndToEndTests {
    /// One row of `probe --json`.
    struct ProbeRow: Decodable {
        var file: String
        var format: String?
        var width: Int?
        var height: Int?
        var orientation: Int?
        var hasAlpha: Bool?
        var displayWidth: Int?
        var displayHeight: Int?
        var frameCount: Int?
        var error: String?
    }

    /// A 2×2 GIF89a of three frames (red, green, white), 100 ms each, looping forever.
    static let animatedGIF: [UInt8] = [
        0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x02, 0x00, 0x02, 0x00, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x00, 0xff,
        0x00, 0x00, 0xff, 0xff, 0xff, 0x21, 0xff, 0x0b, 0x4e, 0x45, 0x54, 0x53, 0x43, 0x41, 0x50, 0x45, 0x32, 0x2e, 0x30, 0x03,
        0x01, 0x00, 0x00, 0x00, 0x21, 0xf9, 0x04, 0x04, 0x0a, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x02,
        0x00, 0x00, 0x02, 0x04, 0x14, 0x45, 0x51, 0x05, 0x00, 0x21, 0xf9, 0x04, 0x04, 0x0a, 0x00, 0x00, 0x00, 0x2c, 0x00, 0x00,
        0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x02, 0x04, 0x0c, 0xc3, 0x30, 0x05, 0x00, 0x21, 0xf9, 0x04, 0x04, 0x0a, 0x00,
        0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x02, 0x04, 0x1c, 0xc7, 0x71, 0x05, 0x00, 0x3b,
    ]

    @Test("probe --json reports the frame count of an animated GIF, and 1 for photographs")
    func probeFrames() async throws {
        let scratch = try ScratchDirectory("probe-frames")
        let gif = scratch.path("animated.gif")
        try Data(Self.animatedGIF).write(to: URL(fileURLWithPath: gif))
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        let run = try await ReleaseCLI.run(["probe", "--json", gif, photo.path])
        #expect(run.status == 0, "\(run)")
        let rows = try run.json([ProbeRow].self)
        #expect(rows.map(\.frameCount) == [3, 1])
        #expect(rows.first?.format == "gif" && rows.first?.width == 2)
    }

    /// A real PNG cut after its first 40 bytes (inside the IHDR chunk): unreadable even as a header.
    static func brokenCopy(of photo: URL, in scratch: ScratchDirectory) throws -> String {
        let path = scratch.path("broken-\(photo.lastPathComponent)")
        try Data(try Data(contentsOf: photo).prefix(40)).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every readable file's row equals `ImageDecoder().probe` of the same bytes (format, size,
    /// orientation, alpha, display size), rows come in argument order, the truncated file's row names
    /// it and carries an error, and only that file makes the exit status non-zero.
    @Test("probe --json agrees with the library; a truncated file is named and fails the run")
    func probe() async throws {
        let scratch = try ScratchDirectory("probe")
        let photos = try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(2, ext: "png")
        let broken = try Self.brokenCopy(of: photos[2], in: scratch)
        let arguments = photos.map(\.path) + [broken]

        let run = try await ReleaseCLI.run(["probe", "--json"] + arguments)
        #expect(run.signal == nil, "\(run)")
        #expect(run.status == 1, "the broken file makes the run fail: \(run)")
        let rows = try run.json([ProbeRow].self)
        try #require(rows.map(\.file) == arguments, "one row per argument, in order")
        for (photo, row) in zip(photos, rows) {
            let info = try ImageDecoder().probe(try Data(contentsOf: photo))
            #expect(row.error == nil, "\(photo.lastPathComponent): \(row.error ?? "")")
            #expect(row.format == info.format.rawValue)
            #expect(row.width == info.width && row.height == info.height)
            #expect(row.orientation == info.orientation.rawValue)
            #expect(row.hasAlpha == info.hasAlpha)
            #expect(row.displayWidth == info.displaySize.width && row.displayHeight == info.displaySize.height)
            #expect(row.frameCount == info.frameCount)
        }
        let bad = try #require(rows.last)
        #expect(bad.format == nil && bad.width == nil)
        #expect(bad.error?.isEmpty == false, "the truncated file reports an error")
        #expect(Set(rows.map { $0.format ?? "-" }).isSuperset(of: ["jpeg", "png"]))

        // Text mode names the broken file on standard error; without it the same files succeed.
        let text = try await ReleaseCLI.run(["probe"] + arguments)
        #expect(text.status == 1 && text.errors.contains(broken), "\(text)")
        for photo in photos { #expect(text.output.contains(photo.path)) }
        let good = try await ReleaseCLI.run(["probe", "--json"] + photos.map(\.path))
        #expect(good.status == 0, "\(good)")
        #expect(try good.json([ProbeRow].self).allSatisfy { $0.error == nil })
    }

    /// Runs `thumbnail` on two JPEGs and a PNG and returns the output directory (status checked).
    static func thumbnails(_ photos: [URL], size: PixelSize, mode: String, extra: [String] = [],
                           in scratch: ScratchDirectory) async throws -> (ReleaseCLI.Run, String) {
        let out = scratch.path("out-\(mode)")
        let run = try await ReleaseCLI.run(["thumbnail"] + photos.map(\.path) + extra
                                     + ["--size", size.description, "--mode", mode, "--out", out])
        #expect(run.signal == nil, "\(run)")
        return (run, out)
    }

    static func stem(_ url: URL) -> String { url.deletingPathExtension().lastPathComponent }

    /// `--mode fill`: one PNG per input named after it, exactly W×H, fully opaque for opaque
    /// photographs, and (almost) the same pixels as the library's aspect-fill thumbnail. A broken
    /// input fails the run, is named on standard error, and does not stop the other outputs.
    @Test("thumbnail --mode fill writes W×H PNGs that match the library's thumbnails")
    func thumbnailFill() async throws {
        let scratch = try ScratchDirectory("thumb-fill")
        let photos = try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
        let broken = try Self.brokenCopy(of: photos[2], in: scratch)
        let size = PixelSize(width: 90, height: 60)
        let (run, out) = try await Self.thumbnails(photos, size: size, mode: "fill", extra: [broken], in: scratch)
        #expect(run.status == 1 && run.errors.contains(broken), "the broken input fails the run: \(run)")

        let written = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(written == photos.map { Self.stem($0) + ".png" }.sorted(), "one PNG per readable input")
        for photo in photos {
            let path = out + "/" + Self.stem(photo) + ".png"
            #expect(try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: path))).format == .png)
            let image = try PixelComparison.decodeFile(path)
            #expect(image.width == size.width && image.height == size.height, "\(path): \(image)")
            if try PixelComparison.isOpaque(photo) {
                let box = PixelComparison.opaqueBounds(image, threshold: 255)
                #expect(box?.width == size.width && box?.height == size.height, "fill covers every pixel of \(path)")
            }
            let reference = try PixelComparison.libraryThumbnail(of: photo, size: size, mode: .fill)
            let difference = try #require(PixelComparison.meanAbsoluteDifference(image, reference))
            #expect(difference < 2, "\(photo.lastPathComponent): mean difference \(difference) from the library's thumbnail")
        }
    }

    /// `--format jpeg|webp [--quality Q] [--lossless]`: files named `<stem>.<format>` in that format,
    /// W×H, close to the library's thumbnail (lossless WebP within premultiplication rounding), and
    /// smaller at a lower quality.
    @Test("thumbnail --format jpeg|webp --quality writes that format, W×H, close to the library's pixels",
          arguments: [(["--format", "jpeg", "--quality", "92"], "jpeg", 4.0), (["--format", "webp", "--quality", "92"], "webp", 4.0),
                      (["--format", "webp", "--lossless"], "webp", 1.0)])
    func thumbnailFormats(arguments: [String], format: String, tolerance: Double) async throws {
        let scratch = try ScratchDirectory("thumb-format")
        let photos = try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
        let size = PixelSize(width: 96, height: 64)
        let (run, out) = try await Self.thumbnails(photos, size: size, mode: "fill", extra: arguments, in: scratch)
        #expect(run.status == 0, "\(run)")
        let fileFormat = try #require(ImageFileFormat(rawValue: format))
        for photo in photos {
            let path = out + "/" + Self.stem(photo) + "." + fileFormat.fileExtension
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(try ImageDecoder().probe(data).format == fileFormat, "\(path)")
            let image = try PixelComparison.decodeFile(path)
            #expect(image.width == size.width && image.height == size.height, "\(path): \(image)")
            // JPEG has no alpha (transparent pixels come out black): compare opaque sources only.
            if fileFormat == .jpeg, try !PixelComparison.isOpaque(photo) { continue }
            let reference = try PixelComparison.libraryThumbnail(of: photo, size: size, mode: .fill)
            let difference = try #require(PixelComparison.meanAbsoluteDifference(image, reference))
            #expect(difference < tolerance, "\(path): mean difference \(difference) from the library's thumbnail")
        }
        guard !arguments.contains("--lossless") else { return }
        let lowScratch = try ScratchDirectory("thumb-low")
        let (low, lowOut) = try await Self.thumbnails(Array(photos.prefix(1)), size: size, mode: "fill",
                                                extra: ["--format", format, "--quality", "20"], in: lowScratch)
        #expect(low.status == 0, "\(low)")
        let name = "/" + Self.stem(photos[0]) + "." + fileFormat.fileExtension
        let small = try FileManager.default.attributesOfItem(atPath: lowOut + name)[.size] as? Int ?? 0
        let large = try FileManager.default.attributesOfItem(atPath: out + name)[.size] as? Int ?? 0
        #expect(small > 0 && small < large, "quality 20 (\(small) B) is smaller than 92 (\(large) B)")
    }

    @Test("thumbnail refuses --quality outside 0…100 and --lossless without webp")
    func thumbnailFormatValidation() async throws {
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        let scratch = try ScratchDirectory("thumb-invalid")
        for extra in [["--quality", "101"], ["--format", "jpeg", "--lossless"]] {
            let run = try await ReleaseCLI.run(["thumbnail", photo.path, "--out", scratch.path("x")] + extra)
            #expect(run.status == 64 && run.errors.contains("--"), "\(extra): \(run)")
        }
    }

    /// `--mode fit`, in a square (bars above and below the landscape photographs) and in a wide box
    /// (bars left and right): each PNG is W×H with the photograph placed inside it: for opaque photographs
    /// the opaque region has the source's aspect ratio (within a pixel), touches both sides along the
    /// limiting axis and is centred along the other; pixels match the library's aspect-fit thumbnail.
    @Test("thumbnail --mode fit keeps the source's aspect ratio inside W×H", arguments: ["80x80", "160x60"])
    func thumbnailFit(box: String) async throws {
        let scratch = try ScratchDirectory("thumb-fit")
        let photos = try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
        let size = try #require(PixelSize(parsing: box))
        let (run, out) = try await Self.thumbnails(photos, size: size, mode: "fit", in: scratch)
        #expect(run.status == 0, "\(run)")

        var checkedShapes = 0
        for photo in photos {
            let path = out + "/" + Self.stem(photo) + ".png"
            let image = try PixelComparison.decodeFile(path)
            #expect(image.width == size.width && image.height == size.height, "\(path): \(image)")
            let reference = try PixelComparison.libraryThumbnail(of: photo, size: size, mode: .fit)
            let difference = try #require(PixelComparison.meanAbsoluteDifference(image, reference))
            #expect(difference < 2, "\(photo.lastPathComponent): mean difference \(difference) from the library's thumbnail")
            guard try PixelComparison.isOpaque(photo) else { continue }

            let source = try RealPhotos.size(of: photo.path)
            let scale = min(Double(size.width) / Double(source.width), Double(size.height) / Double(source.height))
            let expectedWidth = Double(source.width) * scale, expectedHeight = Double(source.height) * scale
            let placed = try #require(PixelComparison.opaqueBounds(image), "\(path) shows the photograph")
            #expect(abs(Double(placed.width) - expectedWidth) <= 1, "\(path): width \(placed.width) vs \(expectedWidth)")
            #expect(abs(Double(placed.height) - expectedHeight) <= 1, "\(path): height \(placed.height) vs \(expectedHeight)")
            #expect(abs(Double(placed.x) - (Double(size.width) - expectedWidth) / 2) <= 1, "\(path): centred horizontally")
            #expect(abs(Double(placed.y) - (Double(size.height) - expectedHeight) / 2) <= 1, "\(path): centred vertically")
            checkedShapes += 1
        }
        #expect(checkedShapes >= 2, "at least the JPEGs are opaque and have their placement checked")
    }
}
