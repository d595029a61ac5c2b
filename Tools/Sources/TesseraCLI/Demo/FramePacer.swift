#if canImport(Glibc)
import Glibc
#endif

/// A 60 Hz display clock for the frame loop. After a frame's work it waits for the next refresh
/// tick, as a display's vsync does; a frame that overran waits for the first tick after its end
/// (it occupied several intervals). The wait happens *after* the work was measured, so it never
/// hides work; it only lets background threads run in real time between frames.
struct FramePacer {
    /// The refresh interval in nanoseconds.
    let interval: UInt64
    /// Whether to wait at all (without pacing, frames run back to back).
    let enabled: Bool
    private(set) var tick: UInt64

    init(intervalSeconds: Double, enabled: Bool) {
        interval = UInt64(intervalSeconds * 1e9)
        self.enabled = enabled
        tick = Self.now()
    }

    /// Nanoseconds on the monotonic clock.
    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Starts the first frame now.
    mutating func start() { tick = Self.now() }

    /// Waits until the refresh tick after the current frame's work and makes it the next frame's start.
    mutating func waitForNextTick() {
        let now = Self.now()
        guard enabled else { tick = now; return }
        let elapsed = now > tick ? now - tick : 0
        let ticks = max(1, (elapsed + interval - 1) / interval)
        let next = tick + ticks * interval
        var deadline = timespec(tv_sec: Int(next / 1_000_000_000), tv_nsec: Int(next % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
        tick = next
    }
}
