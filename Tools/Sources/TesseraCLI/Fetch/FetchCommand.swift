import ArgumentParser
import Foundation
import Tessera
import TesseraHTTP

/// `tessera fetch URL… [--prefetch] [--size WxH] [--cache-dir D] [--out DIR] [--offline] [--header 'Name: value'…] [--json]`.
struct FetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch images through the image manager (memory, disk cache, HTTP) and optionally write them as PNG.",
        discussion: """
        Every URL is requested at once through one ImageManager: urgent requests run up to 4 in parallel, \
        --prefetch puts them on the slow lane instead (one at a time). A URL given several times is \
        downloaded once. Responses are kept in the disk cache (--cache-dir, default \
        $XDG_CACHE_HOME/tessera/images) with their HTTP freshness; --offline answers from it only. \
        --out writes DIR/<n>-<name>.png per distinct URL. Exit status 1 when any URL failed; each \
        failure is named on standard error.
        """
    )

    @Argument(help: "Image URLs (http or https).") var urls: [String]
    @Flag(help: "Request on the slow (prefetch) lane instead of the urgent one.") var prefetch = false
    @Option(help: "Downscale to fit WxH (see --mode).") var size: String?
    @Option(help: "With --size: fit (inside, aspect kept), fill (crop to exactly WxH) or stretch.") var mode: ThumbnailCommand.Mode = .fit
    @Option(name: .customLong("cache-dir"), help: "Disk cache directory.") var cacheDirectory: String?
    @Option(help: "Write each decoded image as PNG into this directory (created if missing).") var out: String?
    @Flag(help: "Answer from the disk cache only; never use the network.") var offline = false
    @Flag(help: "Print nothing per URL.") var quiet = false
    @Option(name: .customLong("header"), help: "An extra request header, 'Name: value' (repeatable), e.g. an Authorization header.")
    var headers: [String] = []
    @Flag(help: "Print one JSON report (per-URL results and the manager's counters) instead of text.") var json = false

    /// What `--json` prints.
    struct Report: Codable {
        struct Item: Codable {
            var url: String
            var width: Int?
            var height: Int?
            /// The PNG written with `--out`.
            var output: String?
            var error: String?
        }
        var results: [Item]
        var statistics: FetchStatistics
        var seconds: Double
    }

    func run() async throws {
        let target = try size.map { text in
            guard let parsed = PixelSize(parsing: text) else { throw ValidationError("--size must be WxH, e.g. 200x200") }
            return parsed
        }
        var configuration = ImageManager.Configuration.standard
        if let cacheDirectory { configuration.disk?.directory = URL(fileURLWithPath: cacheDirectory) }
        configuration.offline = offline
        configuration.diskSweepInterval = nil
        let manager = try ImageManager(configuration: configuration, loader: HTTPDataLoader.shared)
        if let out { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }

        var distinct: [String] = []
        for url in urls where !distinct.contains(url) { distinct.append(url) }
        var extraHeaders: [String: String] = [:]
        for header in headers {
            let parts = header.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }),
                  !parts[1].contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw ValidationError("--header must be 'Name: value' (letters, digits and '-' in the name), got '\(header)'")
            }
            extraHeaders[parts[0]] = parts[1]
        }
        let requestHeaders = extraHeaders
        let priority: FetchPriority = prefetch ? .prefetch : .urgent
        let contentMode = mode.contentMode
        var bar = ProgressBar(total: urls.count, label: prefetch ? "prefetch" : "fetch")
        var results: [String: Result<Bitmap, any Error>] = [:]
        let start = Stopwatch.now()
        await withTaskGroup(of: (String, Result<Bitmap, any Error>).self) { group in
            for text in urls {
                group.addTask {
                    guard let url = URL(string: text), url.scheme != nil else {
                        return (text, .failure(TesseraError(.fetching(.invalidURL(text)))))
                    }
                    // The result is built before the tuple on purpose: Swift 6.3.1 at -O drops the store of
                    // `text` into a tuple built around a `try await` inside do/catch, so `(text, .success(try await …))`
                    // hands the group a garbage tuple (docs/COMPILER-BUGS.md, reproducer included).
                    let result: Result<Bitmap, any Error>
                    let request = ImageRequest(url: url, size: target, contentMode: contentMode, priority: priority, headers: requestHeaders)
                    do { result = .success(try await manager.image(for: request)) } catch { result = .failure(error) }
                    return (text, result)
                }
            }
            var done = 0
            for await (text, result) in group {
                results[text] = result
                done += 1
                bar.update(done)
            }
        }
        bar.finish()
        let seconds = Double(Stopwatch.now() - start) / 1e9

        var items: [Report.Item] = []
        for (index, text) in distinct.enumerated() {
            var item = Report.Item(url: text)
            guard let outcome = results[text] else { preconditionFailure("every URL's task reports a result") }
            switch outcome {
            case .success(let image):
                item.width = image.layout.width
                item.height = image.layout.height
                if let out {
                    let path = (out as NSString).appendingPathComponent("\(index + 1)-\(Self.fileStem(text)).png")
                    do {
                        try Data(try PNGEncoder().encode(image)).write(to: URL(fileURLWithPath: path))
                        item.output = path
                    } catch {
                        item.error = "writing \(path): \(error)"
                    }
                }
            case .failure(let error):
                item.error = "\(error)"
            }
            items.append(item)
        }
        let stats = manager.statistics
        let failed = items.filter { $0.error != nil }
        for item in failed { Terminal.error("\(item.url): error: \(item.error ?? "")") }
        if json {
            try Terminal.json(Report(results: items, statistics: stats, seconds: seconds))
        } else {
            if !quiet {
                for item in items where item.error == nil {
                    print("\(item.url): \(item.width ?? 0)x\(item.height ?? 0)" + (item.output.map { " -> \($0)" } ?? ""))
                }
            }
            print(String(format: "%d of %d URLs in %.2f s: %d downloads, %d disk hits, %d revalidated (304), %d coalesced",
                         distinct.count - failed.count, distinct.count, seconds, stats.downloads, stats.diskHits,
                         stats.notModified, stats.coalesced))
        }
        if !failed.isEmpty {
            Terminal.error("failed (\(failed.count)): \(failed.map(\.url).joined(separator: " "))")
            throw ExitCode(1)
        }
    }

    /// The URL's last path component without extension, reduced to safe file-name characters.
    static func fileStem(_ text: String) -> String {
        let last = URL(string: text)?.deletingPathExtension().lastPathComponent ?? "image"
        let safe = String(last.map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : "_" }.prefix(60))
        return safe.isEmpty || safe == "_" ? "image" : safe
    }
}
