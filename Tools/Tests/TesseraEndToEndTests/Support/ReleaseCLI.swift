import Foundation
import Testing
import TesseraTestSupport

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
    typealias Run = ProgramRun

    /// Runs `tessera arguments…` to completion (see ``ProgramRun/run(_:_:environment:)``), waiting on a
    /// thread of its own.
    static func run(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> Run {
        let binary = try #require(binary, "TESSERA_RELEASE_BINARY names the release tessera binary")
        return try await ProgramRun.run(binary, arguments, environment: extra)
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
