import Tessera
import TesseraMeasurement

/// The memory a display would upload cell images into (a texture per visible row, reused as rows
/// scroll). Copying an image here is the per-frame cost of showing it and touches every byte of it
/// once — including the memory-mapped pages of a table image.
final class FrameBuffer {
    private let base: UnsafeMutableRawPointer
    private let stride: Int
    private let rowSlots: Int
    private let cell: PixelSize
    private let columns: Int

    init(grid: ScrollingGrid) {
        cell = grid.cellSize
        columns = grid.columns
        stride = grid.columns * grid.cellSize.width * 4
        rowSlots = grid.viewportHeight / grid.cellSize.height + 2
        let bytes = stride * rowSlots * grid.cellSize.height
        base = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)   // resident before any baseline
    }

    deinit { base.deallocate() }

    /// Copies `image` into the cell of `item`; returns the bytes copied.
    func upload(_ image: some BitmapImage, item: Int) -> Int {
        let rowSlot = (item / columns) % rowSlots
        let origin = base + rowSlot * cell.height * stride + (item % columns) * cell.width * 4
        let rowBytes = min(image.width * image.style.bytesPerPixel, cell.width * 4)
        let rows = min(image.height, cell.height)
        image.withUnsafeBytes { bytes in
            for y in 0..<rows {
                (origin + y * stride).copyMemory(from: bytes.baseAddress! + y * image.bytesPerRow, byteCount: rowBytes)
            }
        }
        return rowBytes * rows
    }
}
