import Foundation

/// SplitMix64: the stress tools' deterministic random numbers.
struct SplitMix: Sendable {
    var state: UInt64

    mutating func next(_ n: Int) -> Int {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(n))
    }
}

/// Writes `line` and a newline to a descriptor with one `write(2)` (unbuffered: it survives SIGKILL).
func say(_ line: String, to fd: Int32 = 1) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
