import ArgumentParser
import Foundation
import Tessera

/// `tessera probe FILE… [--json]`: header facts without decoding pixels.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Print format, size, orientation, alpha and frame count of image files without decoding them.",
        discussion: "A file that cannot be read prints its error; the others are still reported and the exit status is 1."
    )

    @Argument(help: "Image files.") var files: [String]
    @Flag(help: "Print JSON: an array with one object per file.") var json = false

    /// One file's result, as printed with `--json`.
    struct Row: Codable {
        var file: String
        var format: String?
        var width: Int?
        var height: Int?
        var orientation: Int?
        var hasAlpha: Bool?
        var displayWidth: Int?
        var displayHeight: Int?
        /// Frames in the file (1 for a still image).
        var frameCount: Int?
        var error: String?
    }

    func run() throws {
        let decoder = ImageDecoder()
        var rows: [Row] = []
        for file in files {
            do {
                let info = try decoder.probe(try ImageFiles.read(file))
                rows.append(Row(file: file, format: info.format.rawValue, width: info.width, height: info.height,
                                orientation: info.orientation.rawValue, hasAlpha: info.hasAlpha,
                                displayWidth: info.displaySize.width, displayHeight: info.displaySize.height,
                                frameCount: info.frameCount))
            } catch {
                rows.append(Row(file: file, error: "\(error)"))
            }
        }
        if json {
            try Terminal.json(rows)
        } else {
            for row in rows {
                if let error = row.error {
                    Terminal.error("\(row.file): error: \(error)")
                } else {
                    print("\(row.file): \(row.format!.uppercased()) \(row.width!)x\(row.height!), orientation \(row.orientation!), alpha \(row.hasAlpha! ? "yes" : "no")"
                          + (row.frameCount! > 1 ? ", \(row.frameCount!) frames" : ""))
                }
            }
        }
        if rows.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }
}
