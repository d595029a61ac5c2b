import ArgumentParser
import Foundation
import Tessera

/// `tessera probe FILE… [--json] [--decode] [--decoding lenient|strict]`: header facts without decoding pixels,
/// or with `--decode` also how completely the pixels decode. `--json` also gives each file's ThumbHash, for
/// which it decodes the file at most 100 × 100 (see ``thumbHash(of:info:decoder:)``).
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Print format, size, orientation, alpha and frame count of image files from their headers (--json adds a ThumbHash).",
        discussion: """
        A file that cannot be read prints its error; the others are still reported and the exit status is 1. \
        integrity is "truncated" when the header already shows that the file ends early; with --decode the \
        pixels are decoded too and integrity is the decode's: intact, damaged (the codec recovered from damage) \
        or truncated (rows that never arrived are filled). --decoding strict refuses damaged and truncated files. \
        With --json each file also gets thumbHash, its ThumbHash placeholder in standard base64 (evanw.github.io/thumbhash), \
        from a decode at most 100x100 (the codec's cheap downscaling, then a box filter); the key is absent when \
        the pixels do not decode.
        """
    )

    @Argument(help: "Image files.") var files: [String]
    @Flag(help: "Print JSON: an array with one object per file, with each file's ThumbHash (thumbHash, base64).") var json = false
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
        /// The ThumbHash placeholder in standard base64 (``thumbHash(of:info:decoder:)``); `--json` only, absent
        /// when the pixels do not decode.
        var thumbHash: String?
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
                // Only JSON shows it, so the header-only text probe still decodes nothing.
                let thumbHash = json ? try? Self.thumbHash(of: data, info: info, decoder: decoder) : nil
                rows.append(Row(file: file, format: info.format.rawValue, width: info.width, height: info.height,
                                orientation: info.orientation.rawValue, hasAlpha: info.hasAlpha,
                                displayWidth: info.displaySize.width, displayHeight: info.displaySize.height,
                                frameCount: info.frameCount, integrity: integrity.rawValue, thumbHash: thumbHash?.base64))
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

    /// The ThumbHash of an image file whose header gave `info`: the upright image decoded straight to
    /// ``ThumbHash/encodedSize(for:)`` of its display size (at most 100 × 100, aspect kept) with
    /// ``ImageDecoder/thumbnail(_:size:mode:style:)``, so the codec's cheap downscaling does most of the
    /// shrinking (JPEG's DCT scaling, for one) and cairo's box filter the rest, in premultiplied BGRA; then
    /// hashed as it is. The same pixels with or without `--decode`, which decodes at full size for the
    /// integrity only.
    static func thumbHash(of data: Data, info: ImageInfo, decoder: ImageDecoder) throws(TesseraError) -> ThumbHash {
        let small = try decoder.thumbnail(data, size: ThumbHash.encodedSize(for: info.displaySize), mode: .stretch)
        return try ThumbHash(image: small)
    }
}

/// `--decoding lenient|strict` of `probe` and `thumbnail`.
enum DecodingPolicyArgument: String, ExpressibleByArgument, CaseIterable {
    case lenient, strict

    /// The library's policy.
    var policy: DecodingPolicy { self == .lenient ? .lenient : .strict }
}
