import Tessera
import TesseraMeasurement

/// What one scroll run measured.
struct FrameRun {
    /// Work per frame in seconds, on the frame thread (from the start to the end of the frame's work).
    var frameSeconds: [Double] = []
    /// Frames that ended with at least one visible cell showing a placeholder.
    var placeholderFrames = 0
    /// Bytes copied into the frame buffer.
    var bytesUploaded = 0
    /// Bytes copied while the grid moved.
    var bytesUploadedMoving = 0
    /// Images shown (including swaps to full resolution).
    var imagesShown = 0
    /// Memory of the process before the first and after the last frame (cells still on screen).
    var memoryBefore: MemoryUsage?
    var memoryAfter: MemoryUsage?
}

/// Scrolls the grid frame by frame on the calling thread (the frame thread) and asks a
/// ``FrameMethod`` for the image of every cell that becomes visible, or that still shows a
/// placeholder, at the cell's size.
///
/// Frame `f` shows offset `min(f, movingFrames) × pixelsPerFrame`: a steady scroll, then rest.
/// With resolution swapping, cells get the low-resolution image while the grid moves and are
/// swapped to full resolution once it rests.
struct FrameLoop {
    let configuration: DemoConfiguration
    let swapsResolution: Bool

    func run(_ method: some FrameMethod) -> FrameRun {
        let grid = configuration.grid
        let buffer = FrameBuffer(grid: grid)
        var cells: [Int: (image: (any BitmapImage)?, resolution: Resolution)] = [:]
        var run = FrameRun()
        run.frameSeconds.reserveCapacity(configuration.totalFrames)
        var pacer = FramePacer(intervalSeconds: configuration.budgetSeconds, enabled: configuration.paced)
        run.memoryBefore = MemoryUsage.current()
        pacer.start()
        for frame in 0..<configuration.totalFrames {
            let start = FramePacer.now()
            method.beginFrame()
            let moving = frame < configuration.movingFrames
            let wanted: Resolution = swapsResolution && moving ? .low : .full
            let visible = grid.visibleItems(atOffset: configuration.offset(ofFrame: frame))
            for item in Array(cells.keys) where !visible.contains(item) {
                cells[item] = nil
                method.forget(item)
            }
            var placeholder = false
            for item in visible {
                if let cell = cells[item], cell.image != nil, cell.resolution == wanted || cell.resolution == .full { continue }
                if let image = method.image(for: item, resolution: wanted) {
                    let bytes = buffer.upload(image, item: item)
                    run.bytesUploaded += bytes
                    if moving { run.bytesUploadedMoving += bytes }
                    run.imagesShown += 1
                    cells[item] = (image, wanted)
                } else if cells[item]?.image == nil {
                    cells[item] = (nil, wanted)
                    placeholder = true
                }
            }
            let end = FramePacer.now()
            run.frameSeconds.append(Double(end - start) / 1e9)
            if placeholder { run.placeholderFrames += 1 }
            pacer.waitForNextTick()
        }
        run.memoryAfter = MemoryUsage.current()
        withExtendedLifetime(cells) {}
        return run
    }
}
