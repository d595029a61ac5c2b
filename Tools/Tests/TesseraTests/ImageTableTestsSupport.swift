import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let url: URL
    init() {
        var template = Array((NSTemporaryDirectory() + "/tessera-tables-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        url = URL(fileURLWithPath: path, isDirectory: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

enum TablePattern {
    static func format(_ name: String = "t", width: Int = 32, height: Int = 32, count: Int = 8,
                       style: PixelStyle = .bgra32) -> ImageFormat {
        ImageFormat(name: name, family: "test", style: style, size: PixelSize(width: width, height: height), maximumCount: count)
    }

    static func id(_ k: Int, kind: UInt8 = 0xE0) -> UUID {
        UUID(uuid: (kind, 0, UInt8(k & 0xFF), UInt8(k >> 8 & 0xFF), 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
    }

    /// The crash-test writer's own pixel function (``StressPattern/fill(_:entity:source:)``): a pure
    /// function of both ids, so a reader recomputes exactly what the killed writer stored.
    static func fill(_ view: MutableBitmapView, entity: UUID, source: UUID) {
        StressPattern.fill(view, entity: entity, source: source)
    }

    static func expected(_ layout: BitmapLayout, entity: UUID, source: UUID) -> Bitmap {
        Bitmap(layout: layout) { fill($0, entity: entity, source: source) }
    }

    /// Whether `image` holds exactly (all bytes, padding included) the pattern for its ids.
    static func isExact(_ image: TableImage) -> Bool {
        let want = expected(image.layout, entity: image.entityID, source: image.sourceID)
        return image.withUnsafeBytes { a in want.withUnsafeBytes { b in a.count == b.count && memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    @discardableResult
    static func store(_ table: ImageTable, _ entity: UUID, _ source: UUID) throws -> TableImage {
        try table.store(entityID: entity, sourceID: source) { fill($0, entity: entity, source: source) }
    }

    static func storageFailure(_ body: () throws -> Void) -> StorageFailure? {
        do { try body() } catch let error as TesseraError {
            if case .storage(let failure) = error.reason { return failure }
        } catch {}
        return nil
    }
}

/// An executable product built next to the test bundle (`TesseraStress`, `tessera`).
enum BuiltExecutable {
    static func url(_ name: String) -> URL? {
        var candidates: [URL] = []
        let arg0 = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        candidates.append(arg0)
        if let exe = Bundle.main.executableURL { candidates.append(exe.deletingLastPathComponent()) }
        if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: link).deletingLastPathComponent())
        }
        for dir in candidates {
            for d in [dir, dir.deletingLastPathComponent()] {
                let url = d.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
            }
        }
        return nil
    }
}

/// The `TesseraStress` executable built next to the test bundle.
enum StressBinary {
    static var url: URL? { BuiltExecutable.url("TesseraStress") }
}

/// A running `TesseraStress` with line-by-line access to its standard output.
final class StressChild {
    let process: ChildProcess
    private let output: Int32
    private var buffer: [UInt8] = []
    /// How the child ended, once ``kill()`` or ``finish()`` has waited for it.
    private(set) var exit: ChildProcess.Exit?

    convenience init(directory: URL, seed: UInt64, count: Int = 0, every: Int = 20) throws {
        try self.init(arguments: ["--dir", directory.path, "--seed", String(seed), "--count", String(count), "--every", String(every)])
    }

    /// Runs `TesseraStress` with `arguments` (see Sources/TesseraStress/main.swift).
    init(arguments: [String]) throws {
        guard let url = StressBinary.url else { throw CocoaError(.fileNoSuchFile) }
        let pipe = try ChildProcess.makePipe()
        defer { close(pipe.write) }
        output = pipe.read
        process = try ChildProcess.spawn(url.path, arguments, environment: ProcessInfo.processInfo.environment,
                                         standardOutput: pipe.write, standardError: STDERR_FILENO)
    }

    deinit { close(output) }

    /// Every remaining output line, up to end of file.
    func allLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        return lines
    }

    /// The next output line, or `nil` at end of file.
    func readLine() -> String? {
        let fd = output
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return buffer.isEmpty ? nil : String(decoding: buffer, as: UTF8.self) }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// SIGKILL, then waits for the exit.
    func kill() {
        Foundation.kill(process.pid, SIGKILL)
        exit = process.wait()
    }

    /// Reads the output to its end and waits for the exit: the exit status (-1 after a signal).
    func finish() -> Int32 {
        while readLine() != nil {}
        let ended = process.wait()
        exit = ended
        return ended.status
    }
}
