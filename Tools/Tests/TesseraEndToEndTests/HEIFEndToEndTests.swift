import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// The release `tessera` on HEIC and AVIF: `probe --json` and `thumbnail` on files Debian's
/// `heif-enc` makes from a MATE photograph, and `thumbnail --format avif` checked by another decoder
/// (`avifdec` from libavif) as well as by the library.
@Suite("release tessera on HEIC and AVIF",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct HEIFEndToEndTests {
    typealias ProbeRow = CommandsEndToEndTests.ProbeRow

    /// Runs a Debian program (heif-enc, avifdec) and requires success.
    static func tool(_ path: String, _ arguments: [String]) throws {
        let run = try ProgramRun.run(URL(fileURLWithPath: path), arguments)
        try #require(run.status == 0, "\(path) (scripts/setup installs libheif-examples and libavif-bin): \(run)")
    }

    @Test("probe --json on a HEIC and an AVIF of a photograph reports the photograph's size; thumbnail matches the source's")
    func probeAndThumbnail() async throws {
        let scratch = try ScratchDirectory("heif")
        let photo = try RealPhotos.smallest(1, ext: "jpg")[0]
        let source = try RealPhotos.size(of: photo.path)
        let heic = scratch.path("photo-heic.heic"), avif = scratch.path("photo-avif.avif")
        try Self.tool("/usr/bin/heif-enc", ["-q", "85", "-t", "320", "-o", heic, photo.path])
        try Self.tool("/usr/bin/heif-enc", ["-A", "-q", "85", "-p", "speed=9", "-o", avif, photo.path])
        let run = try await ReleaseCLI.run(["probe", "--json", heic, avif])
        #expect(run.status == 0, "\(run)")
        let rows = try run.json([ProbeRow].self)
        #expect(rows.map(\.format) == ["heic", "avif"])
        for row in rows {
            #expect(row.width == source.width && row.height == source.height, "\(row.file): \(String(describing: row.width))x\(String(describing: row.height))")
            #expect(row.orientation == 1 && row.hasAlpha == false && row.frameCount == 1 && row.error == nil)
        }
        // Thumbnails of both (the HEIC through its 320-pixel thumbnail item) against the JPEG's.
        let size = PixelSize(width: 120, height: 80)
        let out = scratch.path("out")
        let thumbnails = try await ReleaseCLI.run(["thumbnail", heic, avif, "--size", size.description, "--out", out])
        #expect(thumbnails.status == 0, "\(thumbnails)")
        let reference = try PixelComparison.libraryThumbnail(of: photo, size: size, mode: .fill)
        for name in ["photo-heic.png", "photo-avif.png"] {
            let image = try PixelComparison.decodeFile(out + "/" + name)
            #expect(image.width == size.width && image.height == size.height)
            let difference = try #require(PixelComparison.meanAbsoluteDifference(image, reference))
            #expect(difference < 6, "\(name): mean difference \(difference) from the JPEG's thumbnail")
        }
    }

    @Test("thumbnail --format avif writes AVIFs that avifdec decodes to W×H, close to the library's pixels; lower quality is smaller")
    func thumbnailAVIF() async throws {
        let scratch = try ScratchDirectory("thumb-avif")
        let photos = try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
        let size = PixelSize(width: 96, height: 64)
        let out = scratch.path("out"), low = scratch.path("low")
        let run = try await ReleaseCLI.run(["thumbnail"] + photos.map(\.path) + ["--size", size.description, "--format", "avif", "--quality", "90", "--out", out])
        #expect(run.status == 0, "\(run)")
        let lowRun = try await ReleaseCLI.run(["thumbnail", photos[0].path, "--size", size.description, "--format", "avif", "--quality", "20", "--out", low])
        #expect(lowRun.status == 0, "\(lowRun)")
        for photo in photos {
            let stem = photo.deletingPathExtension().lastPathComponent
            let path = out + "/" + stem + ".avif"
            #expect(try ImageDecoder().probe(try Data(contentsOf: URL(fileURLWithPath: path))).format == .avif)
            // Another decoder (libavif's avifdec) reads the file too.
            let png = scratch.path(stem + "-avifdec.png")
            try Self.tool("/usr/bin/avifdec", [path, png])
            let viaAvifdec = try PixelComparison.decodeFile(png)
            #expect(viaAvifdec.width == size.width && viaAvifdec.height == size.height)
            let image = try PixelComparison.decodeFile(path)
            let reference = try PixelComparison.libraryThumbnail(of: photo, size: size, mode: .fill)
            let difference = try #require(PixelComparison.meanAbsoluteDifference(image, reference))
            #expect(difference < 4, "\(path): mean difference \(difference) from the library's thumbnail")
            let between = try #require(PixelComparison.meanAbsoluteDifference(image, viaAvifdec))
            #expect(between < 2, "\(path): our decoder and avifdec differ by \(between) on average")
        }
        let stem = photos[0].deletingPathExtension().lastPathComponent
        let small = FileFacts.size(low + "/" + stem + ".avif") ?? 0, large = FileFacts.size(out + "/" + stem + ".avif") ?? 0
        #expect(small > 0 && small < large, "quality 20 (\(small) B) is smaller than 90 (\(large) B)")
    }
}
