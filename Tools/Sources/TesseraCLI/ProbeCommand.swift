import ArgumentParser
import Foundation
import Tessera

/// `tessera probe FILE… [--json] [--decode] [--decoding lenient|strict]`: header facts without decoding pixels,
/// or with `--decode` also how completely the pixels decode.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Print format, size, orientation, alpha and frame count of image files without decoding them.",
        discussion: """
        A file that cannot be read prints its error; the others are still reported and the exit status is 1. \
        integrity is "truncated" when the header already shows that the file ends early; with --decode the \
        pixels are decoded too and integrity is the decode's: intact, damaged (the codec recovered from damage) \
        or truncated (rows that never arrived are filled). --decoding strict refuses damaged and truncated files.
        """
    )

    @Argument(help: "Image files.") var files: [String]
    @Flag(help: "Print JSON: an array with one object per file.") var json = false
    @Flag(help: "Decode the pixels too, and report the decode's integrity.") var decode = false
    @Option(help: "lenient (the default: decode what browsers show) or strict (refuse damaged and truncated files).")
    var decoding: DecodingPolicyArgument = .lenient

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
        /// `intact`, `damaged` or `truncated` (``DecodeIntegrity``): from the header, or from the decode with `--decode`.
        var integrity: String?
        var error: String?
    }

    func run() throws {
        let decoder = ImageDecoder(limits: DecodingLimits(policy: decoding.policy))
        var rows: [Row] = []
        for file in files {
            do {
                let data = try ImageFiles.read(file)
                let info = try decoder.probe(data)
                let integrity = decode ? try decoder.decode(data).integrity : info.integrity
                rows.append(Row(file: file, format: info.format.rawValue, width: info.width, height: info.height,
                                orientation: info.orientation.rawValue, hasAlpha: info.hasAlpha,
                                displayWidth: info.displaySize.width, displayHeight: info.displaySize.height,
                                frameCount: info.frameCount, integrity: integrity.rawValue))
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
                          + (row.frameCount! > 1 ? ", \(row.frameCount!) frames" : "")
                          + (row.integrity != DecodeIntegrity.intact.rawValue ? ", \(row.integrity!)" : ""))
                }
            }
        }
        if rows.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }
}

/// `--decoding lenient|strict` of `probe` and `thumbnail`.
enum DecodingPolicyArgument: String, ExpressibleByArgument, CaseIterable {
    case lenient, strict

    /// The library's policy.
    var policy: DecodingPolicy { self == .lenient ? .lenient : .strict }
}
