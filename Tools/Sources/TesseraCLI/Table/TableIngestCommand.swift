import ArgumentParser
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// `tessera table ingest --dir D --format NAME:WxH:STYLE:MAX … FILE…`.
struct TableIngestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Decode images once and store them into one or more image tables (one family).",
        discussion: """
        Every --format forms one family: each file is decoded once, downscaled just enough for the \
        largest format, and drawn into every format (aspect fill). The entity id is a hash of the file's \
        absolute path; the source id a hash of its size and modification time, so unchanged files are \
        skipped without being read. Files are decoded and drawn --jobs at a time (default: one per \
        core); the tables' entries do not depend on --jobs.

        With --serve-config FILE instead of --dir and --format, the files (under the server's root, \
        absolute or relative to it) are drawn into the preset tables of the server that FILE and the \
        TESSERA_ variables configure, exactly as its requests would fill them, while that server runs: \
        its next requests for them are table hits. --preset limits it to some presets (default: all).
        """
    )

    @Option(help: "Directory of the tables.") var dir: String?
    @Option(name: .customLong("format"), help: "NAME:WxH:STYLE:MAX, e.g. thumb:100x100:bgra32:500 (STYLE: bgra32, bgr32, bgr565, gray8). Repeatable.")
    var formats: [FormatSpec] = []
    @Option(name: .customLong("serve-config"), help: "A `tessera serve` config file: ingest into that server's preset tables.")
    var serveConfig: String?
    @Option(name: .customLong("preset"), help: "With --serve-config: a preset to fill (repeatable; default: every preset).")
    var presets: [String] = []
    @Argument(help: "Image files.") var files: [String]
    @Flag(help: "Print a JSON summary.") var json = false
    @Option(help: "Files decoded and drawn at once (default: the number of cores).")
    var jobs = ParallelismLimit.coreCount

    struct Summary: Codable {
        var ingested: Int
        var skipped: Int
        var failed: [String]
        var seconds: Double
        var imagesPerSecond: Double
        var jobs: Int
    }

    func validate() throws {
        if serveConfig != nil {
            if !formats.isEmpty || dir != nil { throw ValidationError("--serve-config takes the tables from the server's configuration: no --dir or --format") }
            if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
            return
        }
        if !presets.isEmpty { throw ValidationError("--preset needs --serve-config") }
        if dir == nil { throw ValidationError("give --dir (or --serve-config)") }
        if formats.isEmpty { throw ValidationError("give at least one --format NAME:WxH:STYLE:MAX") }
        if Set(formats.map(\.format.name)).count != formats.count { throw ValidationError("format names must be distinct") }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    func run() async throws {
        HeapPolicy.configureForBatch()
        if let serveConfig {
            try await PresetIngest(config: serveConfig, presets: presets, files: files, jobs: jobs, json: json).run()
            return
        }
        let directory = URL(fileURLWithPath: dir ?? ".")
        let tables = try formats.map { try ImageTable(format: $0.format, directory: directory) }
        let ingester = TableIngester(tables: tables)
        let start = Stopwatch.now()
        let outcomes = await ingester.ingest(files: files, jobs: jobs)
        let ingested = outcomes.filter { if case .ingested = $0 { true } else { false } }.count
        let skipped = outcomes.filter { if case .skipped = $0 { true } else { false } }.count
        let failed = zip(files, outcomes).compactMap { file, outcome -> String? in
            if case .failed(let message) = outcome { "\(file): \(message)" } else { nil }
        }
        let seconds = Double(Stopwatch.now() - start) / 1e9
        let summary = Summary(ingested: ingested, skipped: skipped, failed: failed, seconds: seconds,
                              imagesPerSecond: seconds > 0 ? Double(ingested) / seconds : 0, jobs: jobs)
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
struct TableIngester: Sendable {
    let tables: [ImageTable]
    var decoder = ImageDecoder()

    /// What became of one file.
    enum Outcome: Sendable {
        case ingested, skipped, failed(String)
    }

    /// Ingests `files`, `jobs` at a time (each decode and draw runs outside every table lock), with a
    /// progress bar unless told otherwise; returns one outcome per file, in the order of `files`.
    func ingest(files: [String], jobs: Int, showProgress: Bool = true) async -> [Outcome] {
        await Self.forEach(files, jobs: jobs, showProgress: showProgress) { file in
            do {
                return try ingest(file: file) ? .ingested : .skipped
            } catch {
                return .failed("\(error)")
            }
        }
    }

    /// Runs `body` on each of `files`, `jobs` at a time, with a progress bar unless told otherwise, and
    /// returns its results in the order of `files`: the one loop of `table ingest`, into tables or into a
    /// server's presets. With several jobs files start largest first (``startOrder(_:)``); with one, in
    /// the order given (which is then the order of the stores, and of the least recently used entries
    /// when the table fills up).
    static func forEach<Result: Sendable>(_ files: [String], jobs: Int, showProgress: Bool,
                                          _ body: @escaping @Sendable (String) async -> Result) async -> [Result] {
        let progress = LockedValue((done: 0, bar: ProgressBar(total: files.count, label: "ingest")))
        let results = LockedValue([Result?](repeating: nil, count: files.count))
        let order = jobs > 1 ? startOrder(files) : Array(files.indices)
        await ParallelismLimit(width: jobs).forEach(order) { _, index in
            let result = await body(files[index])
            results.withLock { $0[index] = result }
            if showProgress {
                progress.withLock { p in
                    p.done += 1
                    p.bar.update(p.done)
                }
            }
        }
        if showProgress { progress.withLock { $0.bar.finish() } }
        return results.withLock { $0.compactMap { $0 } }
    }

    /// The indices of `files` in the order their work starts on several cores: by size, largest first
    /// (ties in the given order). A decode's time grows with the file, and a large photo started last
    /// would keep one core busy alone at the end of the run while the others wait: on a batch of 50 that
    /// tail is a large part of the whole. Started first, the large ones overlap with everything else and
    /// the last to start are the quickest. A file that cannot be read sorts last (its error comes when it
    /// is ingested).
    static func startOrder(_ files: [String]) -> [Int] {
        let sizes = files.map { path -> Int in
            var info = stat()
            return stat(path, &info) == 0 ? Int(info.st_size) : -1
        }
        return files.indices.sorted { sizes[$0] != sizes[$1] ? sizes[$0] > sizes[$1] : $0 < $1 }
    }

    /// Returns `false` when every table already holds the file's current source.
    func ingest(file: String) throws -> Bool {
        let entity = FileIdentity.entityID(of: file)
        let opened = try ImageFile(path: file)
        let source = FileIdentity.sourceID(of: opened)
        let missing = tables.filter { !$0.contains(entityID: entity, sourceID: source) }
        if missing.isEmpty { return false }
        let data = try opened.contents(limit: decoder.limits.maximumInputBytes)
        try ingest(data: data, entityID: entity, sourceID: source, into: missing)
        return true
    }

    /// Decodes `data` once (just large enough for the largest table, aspect fill) and stores it into `targets`.
    func ingest(data: Data, entityID: UUID, sourceID: UUID, into targets: [ImageTable]) throws {
        if targets.count == 1, let table = targets.first {
            // One format: the decoder writes straight into the slot when sizes allow (no intermediate copy).
            try table.store(entityID: entityID, sourceID: sourceID) { view in try decoder.decode(data, into: view, mode: .fill) }
            return
        }
        let source = try decoder.decode(data, covering: targets.map(\.format.size))
        for table in targets {
            try table.store(entityID: entityID, sourceID: sourceID) { view in
                try DrawingContext.draw(into: view) { try $0.draw(source, in: $0.bounds, mode: .fill) }
            }
        }
    }
}
