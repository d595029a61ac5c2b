import Foundation

/// What the fuzzing binary exercises, from the TESSERA_FUZZ_TARGET environment variable.
enum FuzzTarget: String, CaseIterable, Sendable {
    case jpeg, png, webp, gif, heic, avif, table, diskcache, freshness, icc

    /// The target named by TESSERA_FUZZ_TARGET; exits with status 64 if it is missing or unknown.
    static let current: FuzzTarget = {
        let name = getenv("TESSERA_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("TESSERA_FUZZ_TARGET must be one of: \(allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(64)
        }
        return target
    }()
}
