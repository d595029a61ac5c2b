import Tessera
import TesseraMeasurement

/// The measurements of one method, as a child process reports them and `--json` prints them.
struct DemoMethodResult: Codable {
    /// A short identifier (`conventional`, `background`, `memory-cache`, `tables-fill`, …).
    var id: String
    /// The label printed in the table.
    var label: String
    /// Statistics of every frame (moving and at rest) against the 16.7 ms budget.
    var frames: FrameStatistics
    /// Statistics of the frames while the grid moved.
    var movingFrames: FrameStatistics
    /// Frames that ended with a placeholder on screen.
    var placeholderFrames: Int
    /// Bytes copied into the frame buffer (what the frame thread touched to show images).
    var bytesUploaded: Int
    /// Of which while moving.
    var bytesUploadedWhileMoving: Int
    /// Images shown, including swaps to full resolution.
    var imagesShown: Int
    /// Bytes of the source files on disk (filled in by the parent).
    var sourceBytesOnDisk: Int
    /// Bytes of the image tables on disk (allocated blocks), 0 for methods without tables.
    var tableBytesOnDisk: Int
    /// Memory after the run minus before it (cells still on screen); `nil` without /proc.
    var memoryDelta: MemoryUsage?
    /// Load failures.
    var failures: Int
    /// Whether the run happened in a process that had just opened existing tables.
    var newProcess: Bool
    /// Work per frame in milliseconds, for plots.
    var frameMilliseconds: [Double]
    /// Images decoded by the method's `ImageManager` so far in its process (the URL-request methods); `nil`
    /// for the others.
    var decodes: Int?

    init(id: String, label: String, run: FrameRun, configuration: DemoConfiguration, failures: Int,
         tableBytes: Int = 0, newProcess: Bool = false, decodes: Int? = nil) {
        self.id = id
        self.label = label
        frames = FrameStatistics(frameSeconds: run.frameSeconds, budgetSeconds: configuration.budgetSeconds)
        movingFrames = FrameStatistics(frameSeconds: Array(run.frameSeconds.prefix(configuration.movingFrames)),
                                       budgetSeconds: configuration.budgetSeconds)
        placeholderFrames = run.placeholderFrames
        bytesUploaded = run.bytesUploaded
        bytesUploadedWhileMoving = run.bytesUploadedMoving
        imagesShown = run.imagesShown
        sourceBytesOnDisk = 0
        tableBytesOnDisk = tableBytes
        if let before = run.memoryBefore, let after = run.memoryAfter { memoryDelta = after.delta(since: before) }
        self.failures = failures
        self.newProcess = newProcess
        frameMilliseconds = run.frameSeconds.map { ($0 * 1e6).rounded() / 1e3 }
        self.decodes = decodes
    }
}
