import Foundation
import Testing
@_spi(Internal) @testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// The debug `tessera` built next to the tests.
enum CommandRun {
    static func tessera(_ arguments: [String]) throws -> ProgramRun {
        let binary = try #require(BuiltExecutable.url("tessera"), "the tessera executable is built next to the tests")
        return try ProgramRun.run(binary, arguments)
    }
}

/// The command-line interface is public: these tests pin its flags, JSON and exit codes.
@Suite("tessera command line")
struct CommandLineTests {
    /// Three small photographs-to-be: two PNGs and a JPEG, plus one broken file.
    static func images(in dir: URL) throws -> (good: [String], bad: String) {
        let colours = [Color(red: 1, green: 0, blue: 0), Color(red: 0, green: 1, blue: 0), Color(red: 0, green: 0, blue: 1)]
        var good: [String] = []
        for (i, colour) in colours.enumerated() {
            let picture = try Bitmap.drawing(size: PixelSize(width: 160 + 40 * i, height: 120)) { $0.fill(with: colour) }
            let path = dir.appendingPathComponent(i == 2 ? "c.jpg" : "\(["a", "b"][i]).png").path
            let bytes = i == 2 ? try JPEGEncoder().encode(picture) : try PNGEncoder().encode(picture)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            good.append(path)
        }
        let bad = dir.appendingPathComponent("broken.png").path
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0]).write(to: URL(fileURLWithPath: bad))
        return (good, bad)
    }

    struct ProbeRow: Decodable { var file: String; var format: String?; var width: Int?; var height: Int?; var error: String? }

    @Test("probe --json reports every file, names the broken one and exits non-zero")
    func probe() throws {
        let dir = try temporaryDirectory()
        let (good, bad) = try Self.images(in: dir)
        let run = try CommandRun.tessera(["probe", "--json"] + good + [bad])
        #expect(run.status != 0)
        let rows = try run.json([ProbeRow].self)
        #expect(rows.count == 4)
        #expect(rows[0].format == "png" && rows[0].width == 160 && rows[0].height == 120)
        #expect(rows[2].format == "jpeg" && rows[2].width == 240)
        #expect(rows[3].error?.contains("truncated") == true)
        #expect(try CommandRun.tessera(["probe"] + good).status == 0)
    }

    @Test("thumbnail writes one PNG per file at the requested size")
    func thumbnail() throws {
        let dir = try temporaryDirectory()
        let (good, _) = try Self.images(in: dir)
        let out = dir.appendingPathComponent("out")
        let run = try CommandRun.tessera(["thumbnail"] + good + ["--size", "50x40", "--mode", "fit", "--out", out.path])
        #expect(run.status == 0, "\(run.errors)")
        for name in ["a", "b", "c"] {
            let info = try ImageDecoder().probe(try Data(contentsOf: out.appendingPathComponent("\(name).png")))
            #expect(info.width == 50 && info.height == 40)
        }
    }

    struct InspectRow: Decodable { var name: String; var entries: Int; var capacity: Int; var bytesPerRow: Int; var bytesOnDisk: Int }

    @Test("table ingest (two formats, one family), get --file, inspect --json --sheet, verify")
    func tables() throws {
        let dir = try temporaryDirectory()
        let (good, bad) = try Self.images(in: dir)
        let tables = dir.appendingPathComponent("tables").path
        let ingest = try CommandRun.tessera(["table", "ingest", "--dir", tables, "--format", "thumb:64x64:bgra32:10",
                                             "--format", "tiny:16x16:gray8:10"] + good + [bad])
        #expect(ingest.status != 0, "a broken file makes the run fail")
        #expect(ingest.errors.contains("broken.png"))
        #expect(ingest.output.contains("ingested 3"))
        let again = try CommandRun.tessera(["table", "ingest", "--dir", tables, "--format", "thumb:64x64:bgra32:10",
                                            "--format", "tiny:16x16:gray8:10"] + good)
        #expect(again.status == 0 && again.output.contains("skipped 3"), "unchanged files are not decoded again")

        let png = dir.appendingPathComponent("got.png").path
        let get = try CommandRun.tessera(["table", "get", "--dir", tables, "--format", "thumb", "--file", good[1], "--out", png])
        #expect(get.status == 0, "\(get.errors)")
        let got = try ImageDecoder().decode(try Data(contentsOf: URL(fileURLWithPath: png)))
        #expect(got.width == 64 && got.pixel(x: 32, y: 32) == [0, 255, 0, 255])
        #expect(try CommandRun.tessera(["table", "get", "--dir", tables, "--format", "thumb", "--id",
                                        UUID().uuidString, "--out", png]).status != 0, "a miss exits non-zero")

        let sheet = dir.appendingPathComponent("sheet.png").path
        let inspect = try CommandRun.tessera(["table", "inspect", "--dir", tables, "--json", "--sheet", sheet])
        #expect(inspect.status == 0)
        let rows = try inspect.json([InspectRow].self).sorted { $0.name < $1.name }
        #expect(rows.map(\.name) == ["thumb", "tiny"])
        #expect(rows.map(\.entries) == [3, 3])
        #expect(rows.map(\.capacity) == [10, 10])
        #expect(rows.map(\.bytesPerRow) == [256, 64])
        #expect(FileManager.default.fileExists(atPath: sheet))

        #expect(try CommandRun.tessera(["table", "verify", "--dir", tables]).status == 0)
        // Flip one pixel byte of the first thumb entry on disk: verify names it and fails.
        let file = URL(fileURLWithPath: tables).appendingPathComponent("thumb.tesseratable").path
        let format = ImageFormat(name: "thumb", style: .bgra32, size: PixelSize(width: 64, height: 64), maximumCount: 10)
        let fd = open(file, O_RDWR)
        var byte: UInt8 = 0x5A
        #expect(pwrite(fd, &byte, 1, off_t(format.headerBytes + 100)) == 1)
        close(fd)
        let verify = try CommandRun.tessera(["table", "verify", "--dir", tables])
        #expect(verify.status != 0)
        #expect(verify.output.contains("damaged: slot 0"))
    }

    /// `table ingest --jobs 3` and `--jobs 1` over every committed fixture (13 files, four codecs) into
    /// two formats of one family: the same entities in both runs, and every entry pixel-identical
    /// (all bytes) with the same source id; both directories verify clean; the JSON reports the jobs.
    @Test("table ingest --jobs N stores exactly what --jobs 1 stores")
    func ingestJobsIdentical() throws {
        let dir = try temporaryDirectory()
        let files = TestFixtures.images.map { TestFixtures.directory.appendingPathComponent($0.name).path }
        let formats = [ImageFormat(name: "thumb", family: "f", style: .bgra32, size: PixelSize(width: 40, height: 30), maximumCount: 20),
                       ImageFormat(name: "tiny", family: "f", style: .bgr565, size: PixelSize(width: 12, height: 12), maximumCount: 20)]
        struct Summary: Decodable { var ingested: Int; var failed: [String]; var jobs: Int }
        var directories: [URL] = []
        for jobs in [1, 3] {
            let tables = dir.appendingPathComponent("jobs\(jobs)")
            let run = try CommandRun.tessera(["table", "ingest", "--dir", tables.path, "--jobs", "\(jobs)", "--json",
                                              "--format", "thumb:40x30:bgra32:20", "--format", "tiny:12x12:bgr565:20"] + files)
            #expect(run.status == 0, "\(run.errors)")
            let summary = try run.json(Summary.self)
            #expect(summary.ingested == files.count && summary.failed.isEmpty && summary.jobs == jobs)
            #expect(try CommandRun.tessera(["table", "verify", "--dir", tables.path]).status == 0)
            directories.append(tables)
        }
        for format in formats {
            let one = try ImageTable(format: format, directory: directories[0])
            let many = try ImageTable(format: format, directory: directories[1])
            #expect(Set(one.entityIDs) == Set(many.entityIDs) && one.entityIDs.count == files.count)
            for entity in one.entityIDs {
                let a = try #require(one.image(for: entity)), b = try #require(many.image(for: entity))
                #expect(a.sourceID == b.sourceID)
                let same = a.withUnsafeBytes { x in b.withUnsafeBytes { y in x.count == y.count && memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
                #expect(same, "\(format.name): \(entity)")
            }
        }
    }
}
