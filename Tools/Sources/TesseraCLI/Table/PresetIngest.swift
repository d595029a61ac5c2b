import ArgumentParser
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraServer

/// `tessera table ingest --serve-config FILE [--preset NAME…] FILE…`: draws files into the preset tables
/// of the server that FILE (and the `TESSERA_` variables) configure, through an ``ImageService`` of that
/// configuration, so that the entries are exactly what the server's requests would store. The server may
/// be running: the two share the table files.
struct PresetIngest {
    let config: String
    let presets: [String]
    let files: [String]
    let jobs: Int
    let json: Bool

    struct Summary: Codable {
        var stored = 0
        var current = 0
        var notStorable = 0
        var failed: [String] = []
        var seconds = 0.0
        var presets: [String] = []
    }

    func run() async throws {
        let settings: ServeSettings
        do throws(ServeSettingError) {
            settings = try ServeSettingsReader().read(arguments: ["--config", config], environment: ProcessInfo.processInfo.environment)
        } catch {
            throw ValidationError(error.description)
        }
        let service = try ImageService(configuration: settings.server)
        let chosen = presets.isEmpty ? service.presetNames : presets
        let root = RootPaths(settings.server.root)
        let start = Stopwatch.now()
        let perFile = await TableIngester.forEach(files, jobs: jobs, showProgress: !json) { file in
            var counts = Summary()
            for preset in chosen {
                do {
                    switch try await service.warm(preset: preset, path: root.relative(file)) {
                    case .stored: counts.stored += 1
                    case .current: counts.current += 1
                    case .notStorable: counts.notStorable += 1
                    }
                } catch {
                    counts.failed.append("\(file) (\(preset)): \(error)")
                }
            }
            return counts
        }
        await service.shutdown()
        var result = Summary(presets: chosen)
        for counts in perFile {
            result.stored += counts.stored
            result.current += counts.current
            result.notStorable += counts.notStorable
            result.failed += counts.failed
        }
        result.seconds = Double(Stopwatch.now() - start) / 1e9
        if json {
            try Terminal.json(result)
        } else {
            for failure in result.failed { Terminal.error("failed: \(failure)") }
            print(String(format: "stored %d, already current %d, not storable %d, failed %d into %d preset table(s) in %.2f s",
                         result.stored, result.current, result.notStorable, result.failed.count, chosen.count, result.seconds))
        }
        if !result.failed.isEmpty { throw ExitCode(1) }
    }
}

/// A file named as typed (absolute, or relative to the current directory when it exists there) as a path
/// relative to the server's root; anything else is taken as relative to the root already.
struct RootPaths {
    let root: String

    init(_ root: String) {
        self.root = URL(fileURLWithPath: root).resolvingSymlinksInPath().path
    }

    func relative(_ file: String) -> String {
        guard file.hasPrefix("/") || FileManager.default.fileExists(atPath: file) else { return file }
        let real = URL(fileURLWithPath: file).resolvingSymlinksInPath().path
        return real.hasPrefix(root + "/") ? String(real.dropFirst(root.count + 1)) : file
    }
}
