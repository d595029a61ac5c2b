import ArgumentParser
import Foundation
import Tessera

/// `tessera table ingest --dir D --format NAME:WxH:STYLE:MAX … FILE…`.
struct TableIngestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Decode images once and store them into one or more image tables (one family).",
        discussion: """
        Every --format forms one family: each file is decoded once, downscaled just enough for the \
        largest format, and drawn into every format (aspect fill). The entity id is a hash of the file's \
        absolute path; the source id a hash of its size and modification time, so unchanged files are \
        skipped without being read.
        """
    )

    @Option(help: "Directory of the tables.") var dir: String
    @Option(name: .customLong("format"), help: "NAME:WxH:STYLE:MAX, e.g. thumb:100x100:bgra32:500 (STYLE: bgra32, bgr32, bgr565, gray8). Repeatable.")
    var formats: [FormatSpec]
    @Argument(help: "Image files.") var files: [String]
    @Flag(help: "Print a JSON summary.") var json = false

    struct Summary: Codable {
        var ingested: Int
        var skipped: Int
        var failed: [String]
        var seconds: Double
        var imagesPerSecond: Double
    }

    func validate() throws {
        if formats.isEmpty { throw ValidationError("give at least one --format NAME:WxH:STYLE:MAX") }
        if Set(formats.map(\.format.name)).count != formats.count { throw ValidationError("format names must be distinct") }
    }

    func run() throws {
        let directory = URL(fileURLWithPath: dir)
        let tables = try formats.map { try ImageTable(format: $0.format, directory: directory) }
        let ingester = TableIngester(tables: tables)
        var ingested = 0, skipped = 0
        var failed: [String] = []
        var progress = ProgressBar(total: files.count, label: "ingest")
        let start = Stopwatch.now()
        for (index, file) in files.enumerated() {
            progress.update(index)
            do {
                if try ingester.ingest(file: file) { ingested += 1 } else { skipped += 1 }
            } catch {
                failed.append("\(file): \(error)")
            }
        }
        progress.finish()
        let seconds = Double(Stopwatch.now() - start) / 1e9
        let summary = Summary(ingested: ingested, skipped: skipped, failed: failed, seconds: seconds,
                              imagesPerSecond: seconds > 0 ? Double(ingested) / seconds : 0)
        for table in tables { try table.flush() }
        if json {
            try Terminal.json(summary)
        } else {
            for failure in failed { Terminal.error("failed: \(failure)") }
            print(String(format: "ingested %d, skipped %d (already current), failed %d into %d format(s) in %.2f s (%.0f images/s)",
                         ingested, skipped, failed.count, tables.count, seconds, summary.imagesPerSecond))
        }
        if !failed.isEmpty { throw ExitCode(1) }
    }
}

/// Decodes one file once and draws it into every table of a family that lacks it.
struct TableIngester {
    let tables: [ImageTable]
    var decoder = ImageDecoder()

    /// Returns `false` when every table already holds the file's current source.
    func ingest(file: String) throws -> Bool {
        let entity = FileIdentity.entityID(of: file)
        let source = try FileIdentity.sourceID(of: file)
        let missing = tables.filter { !$0.contains(entityID: entity, sourceID: source) }
        if missing.isEmpty { return false }
        let data = try ImageFiles.read(file, limit: decoder.limits.maximumInputBytes)
        try ingest(data: data, entityID: entity, sourceID: source, into: missing)
        return true
    }

    /// Decodes `data` once (just large enough for the largest table, aspect fill) and stores it into `targets`.
    func ingest(data: Data, entityID: UUID, sourceID: UUID, into targets: [ImageTable]) throws {
        if targets.count == 1, let table = targets.first {
            // One format: the decoder writes straight into the slot when sizes allow (no intermediate copy).
            try table.store(entityID: entityID, sourceID: sourceID) { view in try decoder.decode(data, into: view, mode: .aspectFill) }
            return
        }
        let source = try decoder.decode(data, covering: targets.map(\.format.size))
        for table in targets {
            try table.store(entityID: entityID, sourceID: sourceID) { view in
                try DrawingContext.draw(into: view) { try $0.draw(source, in: $0.bounds, mode: .aspectFill) }
            }
        }
    }
}
