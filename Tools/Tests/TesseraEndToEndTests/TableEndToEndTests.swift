import Foundation
import Testing
import Tessera
import TesseraTestSupport

/// `tessera table ingest|get|inspect|verify|compact` (release build) on real photographs: entry
/// counts, the pixels `get` hands back (against the library's own thumbnails), what `inspect`
/// reports, the count limit, and compaction keeping every entry readable.
@Suite("release tessera table commands on real photographs",
       .enabled(if: ReleaseCLI.isAvailable, "set TESSERA_RELEASE_BINARY (make test builds the release CLI and sets it)"))
struct TableEndToEndTests {
    struct IngestSummary: Decodable {
        var ingested: Int
        var skipped: Int
        var failed: [String]
        var seconds: Double
        var imagesPerSecond: Double
    }

    struct InspectRow: Decodable {
        var name: String
        var width: Int
        var height: Int
        var style: String
        var entries: Int
        var capacity: Int
        var bytesOnDisk: Int
        var fileSize: Int
        var maximumBytesOnDisk: Int
        var bytesPerRow: Int
        var bytesPerEntry: Int
    }

    /// A `--format` argument and the library's ``ImageFormat`` for it.
    struct Spec {
        var name: String
        var size: PixelSize
        var style: PixelStyle
        var count: Int
        var argument: String { "\(name):\(size):\(style.rawValue):\(count)" }
        var format: ImageFormat { ImageFormat(name: name, family: "ingest", style: style, size: size, maximumCount: count) }
    }

    static func ingest(_ dir: String, _ specs: [Spec], _ files: [URL], extra: [String] = []) async throws -> (ReleaseCLI.Run, IngestSummary) {
        let run = try await ReleaseCLI.run(["table", "ingest", "--dir", dir, "--json"] + extra + specs.flatMap { ["--format", $0.argument] }
                                     + files.map(\.path))
        #expect(run.signal == nil, "\(run)")
        return (run, try run.json(IngestSummary.self))
    }

    static func inspect(_ dir: String) async throws -> [String: InspectRow] {
        let run = try await ReleaseCLI.run(["table", "inspect", "--dir", dir, "--json"])
        #expect(run.status == 0, "\(run)")
        return Dictionary(uniqueKeysWithValues: try run.json([InspectRow].self).map { ($0.name, $0) })
    }

    /// `table get` into a PNG; the decoded image, or `nil` on a miss (exit status 1).
    static func get(_ dir: String, _ format: String, file: URL? = nil, id: UUID? = nil, out: String) async throws -> Bitmap? {
        let selector = file.map { ["--file", $0.path] } ?? ["--id", id!.uuidString]
        let run = try await ReleaseCLI.run(["table", "get", "--dir", dir, "--format", format, "--out", out] + selector)
        #expect(run.signal == nil && (run.status == 0 || run.status == 1), "\(run)")
        return run.status == 0 ? try PixelComparison.decodeFile(out) : nil
    }

    static func verify(_ dir: String) async throws -> ReleaseCLI.Run {
        let run = try await ReleaseCLI.run(["table", "verify", "--dir", dir])
        #expect(run.signal == nil, "\(run)")
        return run
    }

    /// The library's thumbnail of `file` in `style`, as BGRA after a PNG round trip (as `get` writes it).
    static func reference(_ file: URL, _ spec: Spec) throws -> Bitmap {
        let thumb = try ImageDecoder().thumbnail(try Data(contentsOf: file), size: spec.size, mode: .fill, style: spec.style)
        return try ImageDecoder().decode(Data(try PNGEncoder().encode(thumb)))
    }

    /// Ingest of two JPEGs and a PNG into a BGRA and a gray format: the JSON counts them; a second run
    /// skips them all; `get --file` returns each at its format's size with pixels close to the library's
    /// aspect-fill thumbnail of that very photograph (and farther from the others'); `get --id` for each
    /// id in the table returns one of those images; `inspect --json` reports entries, capacity, size,
    /// style and row bytes as the library's ``ImageFormat`` computes them; `verify` passes.
    @Test("ingest, get --file/--id, inspect --json and verify")
    func ingestGetInspectVerify() async throws {
        let scratch = try ScratchDirectory("tables")
        let dir = scratch.path("tables")
        let photos = try RealPhotos.smallest(2, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
        let specs = [Spec(name: "thumb", size: PixelSize(width: 64, height: 48), style: .bgra32, count: 10),
                     Spec(name: "tiny", size: PixelSize(width: 16, height: 16), style: .gray8, count: 10)]

        let (first, summary) = try await Self.ingest(dir, specs, photos)
        #expect(first.status == 0, "\(first)")
        #expect(summary.ingested == photos.count && summary.skipped == 0 && summary.failed.isEmpty)
        #expect(summary.seconds > 0 && summary.imagesPerSecond > 0)
        let (_, again) = try await Self.ingest(dir, specs, photos)
        #expect(again.ingested == 0 && again.skipped == photos.count, "unchanged files are skipped")

        var byFile: [Bitmap] = []
        for spec in specs {
            let references = try photos.map { try Self.reference($0, spec) }
            for (index, photo) in photos.enumerated() {
                let image = try #require(try await Self.get(dir, spec.name, file: photo, out: scratch.path("\(spec.name)-\(index).png")))
                #expect(image.width == spec.size.width && image.height == spec.size.height)
                let own = try #require(PixelComparison.meanAbsoluteDifference(image, references[index]))
                #expect(own < 8, "\(spec.name) \(photo.lastPathComponent): mean difference \(own) from the library's thumbnail")
                for other in references.indices where other != index {
                    let far = try #require(PixelComparison.meanAbsoluteDifference(image, references[other]))
                    #expect(own < far, "\(photo.lastPathComponent) resembles its own thumbnail more than \(photos[other].lastPathComponent)'s")
                }
                if spec.name == "thumb" { byFile.append(image) }
            }
        }

        // Every id in the table (read by the library once the CLI has exited) gets one of those images.
        let format = try #require(ImageTable.existingFormats(in: URL(fileURLWithPath: dir)).first { $0.name == "thumb" })
        let ids = try { try ImageTable(format: format, directory: URL(fileURLWithPath: dir)).entityIDs }()   // closed again at once
        #expect(ids.count == photos.count)
        var matched = Set<Int>()
        for id in ids {
            let image = try #require(try await Self.get(dir, "thumb", id: id, out: scratch.path("by-id.png")))
            if let index = byFile.firstIndex(where: { $0.hasSamePixels(as: image) }) { matched.insert(index) }
        }
        #expect(matched.count == photos.count, "--id and --file reach the same entries")
        #expect(try await Self.get(dir, "thumb", id: UUID(), out: scratch.path("miss.png")) == nil, "an unknown id is a miss")

        let rows = try await Self.inspect(dir)
        #expect(Set(rows.keys) == Set(specs.map(\.name)))
        for spec in specs {
            let row = try #require(rows[spec.name])
            #expect(row.entries == photos.count && row.capacity == spec.count)
            #expect(row.width == spec.size.width && row.height == spec.size.height && row.style == spec.style.rawValue)
            #expect(row.bytesPerRow == spec.format.bytesPerRow && row.bytesPerEntry == spec.format.bytesPerEntry)
            #expect(row.maximumBytesOnDisk == spec.format.maximumBytesOnDisk)
            #expect(row.fileSize >= spec.format.headerBytes + photos.count * spec.format.bytesPerEntry)
            #expect(row.fileSize <= row.maximumBytesOnDisk)
            #expect(FileFacts.size(dir + "/\(spec.name).tesseratable") == row.fileSize)
        }

        let verify = try await Self.verify(dir)
        #expect(verify.status == 0, "\(verify)")
        for spec in specs { #expect(verify.output.contains("\(spec.name): \(photos.count) entries checked, 0 damaged"), "\(verify)") }
    }

    /// A table directory below a regular file cannot be created: ingest fails naming the path and
    /// `ENOTDIR`, as `mkdir -p` would (not a stale errno such as EIO).
    @Test("ingest names the real reason when the table directory cannot be created")
    func uncreatableDirectory() async throws {
        let scratch = try ScratchDirectory("table-blocked")
        let file = scratch.path("a-file")
        try Data("in the way".utf8).write(to: URL(fileURLWithPath: file))
        let photo = try RealPhotos.smallest(1, ext: "jpg")
        let spec = Spec(name: "thumb", size: PixelSize(width: 32, height: 32), style: .bgra32, count: 2)
        let run = try await ReleaseCLI.run(["table", "ingest", "--dir", file + "/tables", "--format", spec.argument, photo[0].path])
        #expect(run.signal == nil && run.status != 0, "\(run)")
        #expect(run.errors.contains("\(String(cString: strerror(ENOTDIR))) (errno \(ENOTDIR))"), "\(run)")
    }

    /// Ingesting five photographs into a format of three: the table holds exactly three, the three
    /// most recently ingested are readable (least recently used entries are replaced), the first two
    /// are misses, and the table verifies. One job, so that "most recently ingested" is the argument
    /// order (with several jobs, stores land in the order the decodes finish).
    @Test("the count limit holds when ingesting more files than COUNT")
    func countLimit() async throws {
        let scratch = try ScratchDirectory("table-limit")
        let dir = scratch.path("tables")
        let photos = try RealPhotos.smallest(3, ext: "jpg") + RealPhotos.smallest(2, ext: "png")
        let spec = Spec(name: "small", size: PixelSize(width: 48, height: 48), style: .bgra32, count: 3)

        let (run, summary) = try await Self.ingest(dir, [spec], photos, extra: ["--jobs", "1"])
        #expect(run.status == 0 && summary.ingested == photos.count, "\(run)")
        let row = try #require(try await Self.inspect(dir)["small"])
        #expect(row.entries == spec.count && row.capacity == spec.count)
        #expect(row.fileSize <= spec.format.maximumBytesOnDisk)

        for (index, photo) in photos.enumerated() {
            let image = try await Self.get(dir, "small", file: photo, out: scratch.path("got.png"))
            let expected = index >= photos.count - spec.count
            #expect((image != nil) == expected, "\(photo.lastPathComponent) \(expected ? "kept" : "replaced")")
        }
        #expect(try await Self.verify(dir).status == 0)
    }

    /// After one entry is deleted (through the library, as an application would), `compact` shrinks
    /// the file to the remaining entries (no larger than header + entries × bytes per entry), every
    /// remaining entry still gets the very same pixels as before, the deleted one is a miss, and the
    /// table verifies.
    @Test("compact keeps every remaining entry readable and shrinks the file")
    func compact() async throws {
        let scratch = try ScratchDirectory("table-compact")
        let dir = scratch.path("tables")
        let photos = try RealPhotos.smallest(3, ext: "jpg") + RealPhotos.smallest(1, ext: "png")
        let spec = Spec(name: "thumb", size: PixelSize(width: 64, height: 64), style: .bgra32, count: 10)
        let (run, _) = try await Self.ingest(dir, [spec], photos)
        #expect(run.status == 0, "\(run)")

        // Delete the entry in the lowest slot, so that compaction has to move one into it.
        let deleted: UUID
        do {
            let format = try #require(ImageTable.existingFormats(in: URL(fileURLWithPath: dir)).first)
            let table = try ImageTable(format: format, directory: URL(fileURLWithPath: dir))
            deleted = try #require(table.entries().first?.entityID)
            table.delete(entityID: deleted)
            try table.flush(synchronously: true)
        }
        var before: [URL: Bitmap] = [:]
        for photo in photos {
            before[photo] = try await Self.get(dir, "thumb", file: photo, out: scratch.path("before.png"))
        }
        #expect(before.count == photos.count - 1, "exactly the deleted entry is a miss")
        let sizeBefore = try #require(try await Self.inspect(dir)["thumb"]).fileSize

        let compact = try await ReleaseCLI.run(["table", "compact", "--dir", dir])
        #expect(compact.status == 0 && compact.signal == nil, "\(compact)")
        let row = try #require(try await Self.inspect(dir)["thumb"])
        #expect(row.entries == photos.count - 1)
        #expect(row.fileSize <= spec.format.headerBytes + row.entries * spec.format.bytesPerEntry, "truncated after the last entry")
        #expect(row.fileSize < sizeBefore)
        #expect(compact.output.contains("thumb: \(row.entries) entries"), "\(compact)")

        for (photo, image) in before {
            let after = try await Self.get(dir, "thumb", file: photo, out: scratch.path("after.png"))
            #expect(after?.hasSamePixels(as: image) == true, "\(photo.lastPathComponent) reads the same after compaction")
        }
        #expect(try await Self.get(dir, "thumb", id: deleted, out: scratch.path("deleted.png")) == nil)
        #expect(try await Self.verify(dir).status == 0)
    }
}
