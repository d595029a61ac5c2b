import Foundation

/// One run of a program to completion, with what it printed: how the tests run the `tessera` binary
/// (the debug build next to the tests, or the release build users run).
public struct ProgramRun: CustomStringConvertible, Sendable {
    /// The arguments the program was given.
    public var arguments: [String]
    /// The exit status, or -1 when a signal ended the program.
    public var status: Int32
    /// The signal that ended the program (a crash), if one did.
    public var signal: Int32?
    /// Standard output.
    public var output: String
    /// Standard error.
    public var errors: String
    /// Wall-clock seconds from start to exit.
    public var seconds: Double

    /// Standard output decoded as JSON.
    public func json<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: Data(output.utf8))
    }

    /// The command line, how it ended and the start of both outputs.
    public var description: String {
        "\(arguments.joined(separator: " ")) → status \(status)\(signal.map { " signal \($0)" } ?? "")\n"
            + "stdout: \(output.prefix(2000))\nstderr: \(errors.prefix(2000))"
    }

    /// The blocking run below on a thread of its own (``onOwnThread(_:)``), for async callers.
    public static func run(_ executable: URL, _ arguments: [String], environment extra: [String: String] = [:]) async throws -> ProgramRun {
        try await onOwnThread { try run(executable, arguments, environment: extra) as ProgramRun }
    }

    /// Runs `executable arguments…` with this process's environment plus `extra` and Swift's crash
    /// backtracer off, waits for it, and captures standard output and error through files (so that a
    /// chatty program never blocks on a full pipe).
    public static func run(_ executable: URL, _ arguments: [String], environment extra: [String: String] = [:]) throws -> ProgramRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path
        let outFD = open(outPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let errFD = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(outFD); close(errFD) }
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        for (key, value) in extra { environment[key] = value }
        let start = ContinuousClock.now
        let child = try ChildProcess.spawn(executable.path, arguments, environment: environment,
                                           standardOutput: outFD, standardError: errFD)
        let exit = child.wait()
        let elapsed = ContinuousClock.now - start
        // FileHandle rather than Data/String(contentsOf:), which in this Foundation leak their buffer for
        // an empty file (LeakSanitizer under `make sanitize`).
        let output = FileHandle(forReadingAtPath: outPath)?.readDataToEndOfFile() ?? Data()
        let errors = FileHandle(forReadingAtPath: errPath)?.readDataToEndOfFile() ?? Data()
        return ProgramRun(arguments: arguments, status: exit.status, signal: exit.signal,
                          output: String(decoding: output, as: UTF8.self), errors: String(decoding: errors, as: UTF8.self),
                          seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}
