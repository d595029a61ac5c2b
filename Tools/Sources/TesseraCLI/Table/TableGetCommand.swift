import ArgumentParser
import Foundation
import Tessera
@_spi(Internal) import TesseraTables

/// `tessera table get --dir D --format NAME (--id ID | --file FILE) --out x.png`.
struct TableGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Write one cached image as PNG (a miss exits with status 1).",
        discussion: "--file derives the entity id exactly as ingest does (hash of the absolute path) and also requires the file's current source id."
    )

    @Option(help: "Directory of the tables.") var dir: String
    @Option(help: "Format name.") var format: String
    @Option(help: "Entity id (UUID).") var id: String?
    @Option(help: "Image file given to ingest.") var file: String?
    @Option(help: "Output PNG path.") var out: String

    func validate() throws {
        if (id == nil) == (file == nil) { throw ValidationError("give exactly one of --id or --file") }
    }

    func run() throws {
        guard let table = try TableDirectory.open(dir, only: format).first else { throw ExitCode(1) }
        let entity: UUID
        var source: UUID? = nil
        if let file {
            entity = FileIdentity.entityID(of: file)
            source = try FileIdentity.sourceID(of: file)
        } else {
            guard let parsed = UUID(uuidString: id!) else { throw ValidationError("--id must be a UUID") }
            entity = parsed
        }
        guard let image = table.image(for: entity, sourceID: source) else {
            Terminal.error("miss: no current entry for \(entity) in \(format)")
            throw ExitCode(1)
        }
        try Data(try PNGEncoder().encode(image)).write(to: URL(fileURLWithPath: out))
        print("\(format) \(entity) slot \(image.slot) -> \(out) (\(image.layout))")
    }
}
