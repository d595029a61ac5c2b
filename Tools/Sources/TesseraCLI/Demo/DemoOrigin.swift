import Foundation
import TesseraHTTP
import TesseraBenchSupport

/// The loopback origin of the demo's `tables-http` child and the HTTP loader that fetches from it.
///
/// An ``Origin`` on 127.0.0.1 serves the demo's source files as `GET /items/<n>`, read from disk on
/// every request as a static file server would; any other path is `404 Not Found`.
final class DemoOrigin: Sendable {
    private let origin: Origin
    /// The loader the demo's `ImageManager` uses; ``stop()`` shuts it down before the origin.
    let loader: HTTPDataLoader

    private init(origin: Origin, loader: HTTPDataLoader) {
        self.origin = origin
        self.loader = loader
    }

    /// Starts serving `files` (item `n` is `files[n]`) and makes a loader for them.
    static func start(files: [String]) async throws -> DemoOrigin {
        let origin = try await Origin.start(logsArrivals: false) { path in resource(at: path, files: files) }
        return DemoOrigin(origin: origin, loader: HTTPDataLoader())
    }

    /// The URL of grid item `index`.
    func url(forItem index: Int) -> URL { origin.url("/items/\(index)") }

    /// Shuts the loader down, then stops the origin.
    func stop() async {
        try? await loader.shutdown()
        await origin.stop()
    }

    /// The file of `/items/<n>` as an `application/octet-stream` body, or `nil` (404) for any other
    /// path or a file that cannot be read.
    private static func resource(at path: String, files: [String]) -> Origin.Resource? {
        guard path.hasPrefix("/items/"), let index = Int(path.dropFirst("/items/".count)), files.indices.contains(index),
              let data = FileManager.default.contents(atPath: files[index]) else { return nil }
        return Origin.Resource(body: [UInt8](data), contentType: "application/octet-stream")
    }
}
