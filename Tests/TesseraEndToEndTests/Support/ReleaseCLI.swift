import Foundation
import Testing

/// The release `tessera` binary that users run, as `make test` builds it.
///
/// `make test` runs `swift build -c release --product tessera` and passes the binary's path in
/// `TESSERA_RELEASE_BINARY`. A plain `swift test` without it skips these suites and says why.
enum ReleaseCLI {
    /// The binary, when the environment names one.
    static let binary: URL? = ProcessInfo.processInfo.environment["TESSERA_RELEASE_BINARY"]
        .flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }

    /// Whether the end-to-end suites can run.
    static var isAvailable: Bool { binary.map { FileManager.default.isExecutableFile(atPath: $0.path) } ?? false }

    /// What one run of the binary produced.
    struct Run: CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        /// The signal that ended the process, when one did (a crash).
        var signal: Int32?
        var output: String
        var errors: String
        var seconds: Double

        func json<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: Data(output.utf8))
        }

        var description: String {
            "tessera \(arguments.joined(separator: " ")) → status \(status)\(signal.map { " signal \($0)" } ?? "")\n"
                + "stdout: \(output.prefix(2000))\nstderr: \(errors.prefix(2000))"
        }
    }

    /// Runs `tessera arguments…` to completion and captures standard output and error (through files,
    /// so a chatty child never blocks on a full pipe).
    static func run(_ arguments: [String], environment extra: [String: String] = [:]) throws -> Run {
        let binary = try #require(binary, "TESSERA_RELEASE_BINARY names the release tessera binary")
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("tessera-e2e-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path
        let outFD = open(outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(outFD); close(errFD) }
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        for (key, value) in extra { environment[key] = value }
        let start = ContinuousClock.now
        let child = try ChildProcess.spawn(binary.path, arguments, environment: environment,
                                           standardOutput: outFD, standardError: errFD)
        let exit = child.wait()
        let elapsed = ContinuousClock.now - start
        let output = FileHandle(forReadingAtPath: outPath)?.readDataToEndOfFile() ?? Data()
        let errors = FileHandle(forReadingAtPath: errPath)?.readDataToEndOfFile() ?? Data()
        return Run(arguments: arguments, status: exit.status, signal: exit.signal,
                   output: String(decoding: output, as: UTF8.self), errors: String(decoding: errors, as: UTF8.self),
                   seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}

/// A fresh directory under the system's temporary directory, removed when the value is dropped.
final class ScratchDirectory: Sendable {
    let url: URL

    init(_ label: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-e2e-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ component: String) -> String { url.appendingPathComponent(component).path }
}
