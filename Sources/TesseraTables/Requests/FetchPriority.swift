import TesseraImaging
/// Which queue a request waits in (SGImageCache's fast and slow queues).
public enum FetchPriority: String, Sendable, Hashable, Codable {
    /// Needed now: the fast lane, several downloads in parallel.
    case urgent
    /// Needed later: the slow lane, one download at a time, started only while no urgent download runs
    /// or waits.
    case prefetch
}
