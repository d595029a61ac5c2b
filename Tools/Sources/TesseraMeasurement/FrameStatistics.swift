import Tessera
/// What a display would make of a run of frames: how many met the refresh budget, how many were
/// dropped, the effective frame rate, and percentiles of the work per frame.
///
/// A frame whose work takes longer than the budget is **dropped**: it occupies
/// `⌈work / budget⌉` refresh intervals (vsync) instead of one, and the frame it was meant to replace
/// stays on screen meanwhile. The effective rate is `frames / (intervals × budget)`.
public struct FrameStatistics: Sendable, Hashable, Codable {
    /// The refresh interval in seconds (1/60 by default).
    public var budgetSeconds: Double
    /// Number of frames.
    public var frames: Int
    /// Frames whose work fit in the budget.
    public var withinBudget: Int
    /// Frames whose work exceeded the budget.
    public var dropped: Int
    /// Refresh intervals the frames occupied.
    public var refreshIntervals: Int
    /// `frames / (refreshIntervals × budgetSeconds)`.
    public var effectiveFPS: Double
    /// Median work per frame, in seconds.
    public var medianSeconds: Double
    /// 99th percentile (nearest rank) of work per frame, in seconds.
    public var p99Seconds: Double
    /// Largest work per frame, in seconds.
    public var maximumSeconds: Double
    /// Total work, in seconds.
    public var totalSeconds: Double

    /// Computes the statistics of `frameSeconds` (work per frame) against `budgetSeconds`.
    public init(frameSeconds: [Double], budgetSeconds: Double = 1.0 / 60) {
        precondition(budgetSeconds > 0)
        self.budgetSeconds = budgetSeconds
        frames = frameSeconds.count
        dropped = frameSeconds.filter { $0 > budgetSeconds }.count
        withinBudget = frames - dropped
        refreshIntervals = frameSeconds.reduce(0) { $0 + Self.intervals(for: $1, budget: budgetSeconds) }
        effectiveFPS = refreshIntervals == 0 ? 0 : Double(frames) / (Double(refreshIntervals) * budgetSeconds)
        let sorted = frameSeconds.sorted()
        medianSeconds = Self.percentile(sorted, 0.5)
        p99Seconds = Self.percentile(sorted, 0.99)
        maximumSeconds = sorted.last ?? 0
        totalSeconds = frameSeconds.reduce(0, +)
    }

    /// Refresh intervals a frame of `work` seconds occupies: at least one.
    public static func intervals(for work: Double, budget: Double) -> Int {
        max(1, Int((work / budget).rounded(.up)))
    }

    /// The nearest-rank `p` quantile (0…1) of ascending `sorted`; 0 when empty.
    public static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((Double(sorted.count) * min(max(p, 0), 1)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }
}
