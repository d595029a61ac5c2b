import TesseraImaging
import TesseraTables
/// How much of a body has arrived.
public struct LoadProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes of the body received so far.
    public var receivedBytes: Int
    /// The body's size from `Content-Length`, when the server sent one.
    public var expectedBytes: Int?

    /// Creates a progress value.
    public init(receivedBytes: Int, expectedBytes: Int?) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
    }

    /// `receivedBytes / expectedBytes` in 0…1, or `nil` when the size is unknown.
    public var fractionCompleted: Double? {
        guard let expected = expectedBytes, expected > 0 else { return nil }
        return min(1, Double(receivedBytes) / Double(expected))
    }

    /// `"received/expected bytes"`.
    public var description: String { "\(receivedBytes)/\(expectedBytes.map(String.init) ?? "?") bytes" }
}
