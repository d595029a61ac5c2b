import ArgumentParser
import Foundation
import Tessera
import TesseraBenchSupport

/// `tessera bench colour DIR [--json]`: what an embedded ICC profile costs a decode.
struct ColourBenchmark: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "colour",
        abstract: "Medians of thumbnail and full decodes of JPEGs as they are, tagged sRGB and tagged Display P3.",
        discussion: """
        For each JPEG in DIR, three copies in memory: the file as it is (untagged, the baseline), with \
        lcms2's sRGB profile in an APP2 segment (recognised as sRGB: no transform should run) and with a \
        Display P3 profile (every decoded pixel converted to sRGB by lcms2). Each repetition decodes the \
        three copies in turn (interleaved), as a --size thumbnail and at full size. Times are medians \
        of per-file medians; the ratios are tagged over untagged.
        """
    )

    @Argument(help: "Directory of images (JPEG files are used).") var directory: String
    @Option(help: "Timed repetitions per file and copy.") var repetitions = 7
    @Option(help: "Thumbnail size WxH.") var size = "256x256"
    @Option(help: "Only the first N JPEG files (0 = all).") var limit = 0
    @Flag(help: "Print JSON.") var json = false

    /// Medians for one copy of the files, in milliseconds.
    struct CopyResult: Codable {
        var copy: String
        var thumbnailMs: Double
        var fullDecodeMs: Double
        var thumbnailRatio: Double
        var fullDecodeRatio: Double
    }

    struct Report: Codable {
        var directory: String
        var files: Int
        var thumbnailSize: String
        var repetitions: Int
        var copies: [CopyResult]
    }

    func run() throws {
        guard let target = PixelSize(parsing: size) else { throw ValidationError("--size must be WxH") }
        var files = try ImageFiles.list(in: directory).filter { ["jpg", "jpeg"].contains(URL(fileURLWithPath: $0).pathExtension.lowercased()) }
        if limit > 0 { files = Array(files.prefix(limit)) }
        guard !files.isEmpty else { throw ValidationError("no JPEG files in \(directory)") }
        let profiles = [("untagged", nil), ("sRGB", try ICCProfiles.sRGB()), ("Display P3", try ICCProfiles.displayP3())]
        let decoder = ImageDecoder()
        // [copy][file] medians, in seconds.
        var thumbs = [[Double]](repeating: [], count: profiles.count), fulls = thumbs
        var progress = ProgressBar(total: files.count, label: "bench colour")
        for (index, file) in files.enumerated() {
            progress.update(index)
            let original = [UInt8](try ImageFiles.read(file))
            let copies = profiles.map { $0.1.map { Data(ICCProfiles.jpeg(original, embedding: $0)) } ?? Data(original) }
            for copy in copies { _ = try decoder.thumbnail(copy, size: target) }   // warm-up, and the transform cache
            var thumbSamples = [[Double]](repeating: [], count: copies.count), fullSamples = thumbSamples
            for _ in 0..<repetitions {
                for (k, copy) in copies.enumerated() {
                    thumbSamples[k].append(try Stopwatch.time { try decoder.thumbnail(copy, size: target) }.1)
                    fullSamples[k].append(try Stopwatch.time { try decoder.decode(copy) }.1)
                }
            }
            for k in copies.indices {
                thumbs[k].append(Summary(thumbSamples[k]).median)
                fulls[k].append(Summary(fullSamples[k]).median)
            }
        }
        progress.finish()
        let thumbBase = Summary(thumbs[0]).median, fullBase = Summary(fulls[0]).median
        let copies = profiles.indices.map { k in
            let thumb = Summary(thumbs[k]).median, full = Summary(fulls[k]).median
            return CopyResult(copy: profiles[k].0, thumbnailMs: thumb * 1000, fullDecodeMs: full * 1000,
                              thumbnailRatio: thumb / thumbBase, fullDecodeRatio: full / fullBase)
        }
        let report = Report(directory: directory, files: files.count, thumbnailSize: target.description,
                            repetitions: repetitions, copies: copies)
        if json { try Terminal.json(report); return }
        print("Colour benchmark: \(files.count) JPEGs from \(directory), thumbnails \(target), medians of \(repetitions) interleaved runs")
        Terminal.table(["copy", "thumbnail ms", "vs untagged", "full decode ms", "vs untagged"], copies.map { c in
            [c.copy, String(format: "%.2f", c.thumbnailMs), String(format: "%.2fx", c.thumbnailRatio),
             String(format: "%.2f", c.fullDecodeMs), String(format: "%.2fx", c.fullDecodeRatio)]
        })
    }
}
