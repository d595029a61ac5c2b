import Foundation

/// An executable product built next to the test bundle (`TesseraStress`, `tessera`).
public enum BuiltExecutable {
    /// The executable `name` beside the running test bundle or one directory up, if there is one.
    public static func url(_ name: String) -> URL? {
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
public enum StressBinary {
    /// Its URL, if it was built.
    public static var url: URL? { BuiltExecutable.url("TesseraStress") }
}

/// A running `TesseraStress` with line-by-line access to its standard output.
public final class StressChild {
    /// The running child.
    public let process: ChildProcess
    private let output: Int32
    private var buffer: [UInt8] = []
    /// How the child ended, once ``kill()`` or ``finish()`` has waited for it.
    public private(set) var exit: ChildProcess.Exit?

    /// Runs the table stress pattern in `directory` from `seed`.
    public convenience init(directory: URL, seed: UInt64, count: Int = 0, every: Int = 20) throws {
        try self.init(arguments: ["--dir", directory.path, "--seed", String(seed), "--count", String(count), "--every", String(every)])
    }

    /// Runs `TesseraStress` with `arguments` (see Sources/TesseraStress/main.swift).
    public init(arguments: [String]) throws {
        guard let url = StressBinary.url else { throw CocoaError(.fileNoSuchFile) }
        let pipe = try ChildProcess.makePipe()
        defer { close(pipe.write) }
        output = pipe.read
        process = try ChildProcess.spawn(url.path, arguments, environment: ProcessInfo.processInfo.environment,
                                         standardOutput: pipe.write, standardError: STDERR_FILENO)
    }

    deinit { close(output) }

    /// Every remaining output line, up to end of file.
    public func allLines() -> [String] {
        var lines: [String] = []
        while let line = readLine() { lines.append(line) }
        return lines
    }

    /// The next output line, or `nil` at end of file.
    public func readLine() -> String? {
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
    public func kill() {
        Foundation.kill(process.pid, SIGKILL)
        exit = process.wait()
    }

    /// Reads the output to its end and waits for the exit: the exit status (-1 after a signal).
    public func finish() -> Int32 {
        while readLine() != nil {}
        let ended = process.wait()
        exit = ended
        return ended.status
    }
}
