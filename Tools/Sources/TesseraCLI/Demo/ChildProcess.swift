import Foundation

/// Runs one demo child: this same executable, `tessera demo --child NAME --config FILE`, and decodes
/// the JSON results it prints. Each method runs in a fresh process so that its memory is measured
/// from a clean baseline, and so that the cold start really reopens the tables.
enum ChildProcess {
    /// The path of the running executable.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    static func run(_ child: String, configurationPath: String) throws -> [DemoMethodResult] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["demo", "--child", child, "--config", configurationPath]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ChildFailure(message: "demo child '\(child)' exited with status \(process.terminationStatus)")
        }
        return try JSONDecoder().decode([DemoMethodResult].self, from: data)
    }
}

/// A child process failed.
struct ChildFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
