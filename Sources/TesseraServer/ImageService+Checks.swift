#if Serving
import Foundation
import Tessera

extension ImageService {
    /// The decoder of a service of `configuration`: its source limits and decoding policy.
    static func decoder(for configuration: ServerConfiguration) -> ImageDecoder {
        let limits = configuration.limits
        return ImageDecoder(limits: DecodingLimits(maximumPixelCount: limits.maximumSourcePixels, maximumInputBytes: limits.maximumSourceBytes,
                                                   maximumFrameCount: limits.maximumAnimationFrames,
                                                   maximumAnimationPixelCount: limits.maximumAnimationPixels, policy: configuration.decoding))
    }

    /// Where a service of `configuration` keeps its tables: ``ServerConfiguration/tablesDirectory``, else the
    /// per-user default for `root` (``ServerConfiguration/defaultTablesDirectory(root:)``).
    static func tablesDirectory(of configuration: ServerConfiguration, root: RootDirectory) -> URL {
        URL(fileURLWithPath: configuration.tablesDirectory ?? ServerConfiguration.defaultTablesDirectory(root: root.realPath))
    }

    /// Refuses a tables directory inside the root: its files would be served.
    static func checkTablesOutside(_ root: RootDirectory, _ tables: URL) throws(ServerConfigurationError) {
        if (tables.standardizedFileURL.path + "/").hasPrefix(root.realPath + "/") {
            throw ServerConfigurationError("the tables directory must not be inside --root (it would be served)")
        }
    }

    /// The fallback image's bytes, read and probed, with its `Cache-Control`; `nil` without one.
    static func loadFallback(_ setting: ServerConfiguration.Fallback?,
                             decoder: ImageDecoder) throws(ServerConfigurationError) -> (data: Data, cacheControl: String)? {
        guard let setting else { return nil }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: setting.image)) } catch {
            throw ServerConfigurationError("the fallback image \(setting.image) cannot be read: \(error.localizedDescription)")
        }
        do { _ = try decoder.probe(data) } catch {
            throw ServerConfigurationError("the fallback image \(setting.image) cannot be decoded: \(error)")
        }
        return (data, "public, max-age=\(setting.maxAgeSeconds)")
    }

    /// What would stop a service of `configuration` from starting, found without starting it and without
    /// writing anything: every problem of ``ServerConfiguration/problems()``, then the root (it exists and
    /// is a directory), the tables directory (outside the root; it, or the directory it would be made in,
    /// writable), the watermarks and the fallback image (read and decoded). The tables are not opened, so
    /// the check also runs beside a server that holds them (`tessera serve --check-config`).
    public static func startupProblems(of configuration: ServerConfiguration) -> [ServerConfigurationError] {
        var problems = configuration.problems()
        func check(_ part: () throws(ServerConfigurationError) -> Void) {
            do throws(ServerConfigurationError) { try part() } catch { problems.append(error) }
        }
        if !configuration.root.isEmpty {
            check { () throws(ServerConfigurationError) in
                let root = try RootDirectory(configuration.root, recheckSeconds: configuration.sourceCheckIntervalSeconds)
                let tables = tablesDirectory(of: configuration, root: root)
                try checkTablesOutside(root, tables)
                try checkWritable(tables)
            }
        }
        let decoder = decoder(for: configuration)
        check { () throws(ServerConfigurationError) in _ = try loadWatermarks(configuration.watermarks, decoder: decoder) }
        check { () throws(ServerConfigurationError) in _ = try loadFallback(configuration.fallback, decoder: decoder) }
        return problems
    }

    /// Refuses a directory that cannot be written, or, when it does not exist yet, whose nearest existing
    /// parent cannot be written (it could not be made).
    private static func checkWritable(_ directory: URL) throws(ServerConfigurationError) {
        var existing = directory.standardizedFileURL
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" { existing.deleteLastPathComponent() }
        guard access(existing.path, W_OK | X_OK) == 0 else {
            let what = existing.path == directory.standardizedFileURL.path ? "" : " (it would be made in \(existing.path))"
            throw ServerConfigurationError("the tables directory \(directory.path) cannot be written\(what)")
        }
    }
}
#endif
