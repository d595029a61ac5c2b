import Foundation
import Hummingbird
import Logging
import Tessera
import TesseraServer

/// A root directory of generated images, a tables directory, and an in-process `ImageServer` listening on
/// 127.0.0.1 for the tests of the image service.
public final class ServeFixture: Sendable {
    /// The fixture's directory (removed when the fixture goes).
    public let base: URL
    /// The image root: `photo.jpg` 400×300, `sub/tall.jpg` 300×400, `logo.png` 120×120 half transparent, `broken.jpg`, and
    /// symbolic links out of the root and within it.
    public var root: URL { base.appendingPathComponent("root") }
    /// The tables directory.
    public var tables: URL { base.appendingPathComponent("tables") }
    /// A JPEG outside the root, which no request may reach.
    public var secret: URL { base.appendingPathComponent("secret.jpg") }

    /// Writes the images.
    public init() throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base.appendingPathComponent("root/sub"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: base.appendingPathComponent("tables"), withIntermediateDirectories: true)
        try Self.jpeg(width: 400, height: 300).write(to: root.appendingPathComponent("photo.jpg"))
        try Self.jpeg(width: 300, height: 400).write(to: root.appendingPathComponent("sub/tall.jpg"))
        try Self.png(width: 120, height: 120, alpha: true).write(to: root.appendingPathComponent("logo.png"))
        try Data("not an image".utf8).write(to: root.appendingPathComponent("broken.jpg"))
        try Self.jpeg(width: 64, height: 64).write(to: secret)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link-out.jpg").path, withDestinationPath: secret.path)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("dir-out").path, withDestinationPath: base.path)
        try FileManager.default.createSymbolicLink(atPath: root.appendingPathComponent("link-in.jpg").path,
                                                   withDestinationPath: root.appendingPathComponent("photo.jpg").path)
    }

    deinit { try? FileManager.default.removeItem(at: base) }

    /// The default test configuration: presets `thumb` 64x64 fill and `box` 100x100 fit, and a request
    /// deadline of 600 s rather than 30 s. The deadline has its own tests, which set it; every other test
    /// asks for an answer, and while the whole suite runs on two cores a first render can wait longer than
    /// 30 s for a thread (nine fixtures answered 504 that way once).
    public func configuration(_ change: (inout ServerConfiguration) -> Void = { _ in }) -> ServerConfiguration {
        var configuration = ServerConfiguration(root: root.path)
        configuration.tablesDirectory = tables.path
        configuration.limits.requestTimeoutSeconds = 600
        configuration.presets = [
            .init(name: "thumb", width: 64, height: 64, mode: .fill),
            .init(name: "box", width: 100, height: 100, mode: .fit),
        ]
        change(&configuration)
        return configuration
    }

    /// Runs `body` with a server on 127.0.0.1 and an ephemeral port, then stops it. `prepare` changes the
    /// server before it starts (an addition to the gallery, say).
    public func withServer<R>(_ configuration: ServerConfiguration, prepare: (inout ImageServer) -> Void = { _ in },
                       _ body: (Int, ImageServer) async throws -> R) async throws -> R {
        var logger = Logger(label: "tessera.serve.test")
        logger.logLevel = .critical
        var prepared = try ImageServer(configuration: configuration, logger: logger)
        prepare(&prepared)
        let server = prepared
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        // The application `tessera serve` runs, memory-hit handler included.
        let app = server.application(host: "127.0.0.1", port: 0) { port in
            continuation.yield(port)
            continuation.finish()
        }
        let task = Task {
            defer { continuation.finish() }
            try await app.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CocoaError(.fileReadUnknown) }
        let result: R
        do {
            result = try await body(port, server)
        } catch {
            task.cancel()
            _ = await task.result
            throw error
        }
        // A graceful stop that ends before this returns: the tables are closed (and their locks
        // released) once the server goes, so a test can open them again.
        task.cancel()
        _ = await task.result
        await server.service.shutdown()
        return result
    }

    /// A JPEG of a colour gradient.
    public static func jpeg(width: Int, height: Int) throws -> Data {
        Data(try JPEGEncoder(quality: 90).encode(gradient(width: width, height: height, alpha: false)))
    }

    /// A PNG of a gradient, with a transparent half when `alpha`.
    public static func png(width: Int, height: Int, alpha: Bool) throws -> Data {
        Data(try PNGEncoder().encode(gradient(width: width, height: height, alpha: alpha)))
    }

    /// A gradient in blue (x) and green (y), with red at 128; the left half transparent when `alpha`.
    public static func gradient(width: Int, height: Int, alpha: Bool) -> Bitmap {
        Bitmap(width: width, height: height, style: .bgra32) { view in
            for y in 0..<height {
                let row = view.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let a: UInt8 = alpha && x < width / 2 ? 0 : 255
                    // Premultiplied: a transparent pixel has zero colour.
                    row[x * 4] = a == 0 ? 0 : UInt8(x * 255 / max(1, width - 1))
                    row[x * 4 + 1] = a == 0 ? 0 : UInt8(y * 255 / max(1, height - 1))
                    row[x * 4 + 2] = a == 0 ? 0 : 128
                    row[x * 4 + 3] = a
                }
            }
        }
    }
}

/// What an image body is: its format from the magic bytes, and its decoded size.
public struct DecodedBody: Equatable, CustomStringConvertible {
    /// `jpeg`, `png`, `webp`, `avif` or `unknown`.
    public var format: String
    /// The decoded width.
    public var width: Int
    /// The decoded height.
    public var height: Int

    /// Reads the magic bytes and decodes `body`.
    public init(_ body: [UInt8]) throws {
        if body.starts(with: [0xFF, 0xD8, 0xFF]) { format = "jpeg" }
        else if body.starts(with: [0x89, 0x50, 0x4E, 0x47]) { format = "png" }
        else if body.count > 12, body.starts(with: Array("RIFF".utf8)), Array(body[8..<12]) == Array("WEBP".utf8) { format = "webp" }
        else if body.count > 12, Array(body[4..<12]) == Array("ftypavif".utf8) { format = "avif" }
        else { format = "unknown" }
        let image = try ImageDecoder().decode(Data(body))
        width = image.width
        height = image.height
    }

    /// The expected value.
    public init(format: String, width: Int, height: Int) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// `format WxH`.
    public var description: String { "\(format) \(width)x\(height)" }
}
