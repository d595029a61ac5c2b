import Foundation
import Tessera
import TesseraMeasurement

/// Everything a demo run (and each of its child processes) needs to know: the grid, the scroll, the
/// formats and where the source images and tables are. Written to a file the children read.
struct DemoConfiguration: Codable, Sendable {
    /// The derived source images, one per grid item, in item order.
    var sourcePaths: [String]
    /// Where the demo keeps its tables and derived sources.
    var workDirectory: String
    /// The grid (its item count is `sourcePaths.count`).
    var grid: ScrollingGrid
    /// Pixels scrolled per frame while moving.
    var pixelsPerFrame: Int
    /// Frames while the grid moves.
    var movingFrames: Int
    /// Frames at rest after the scroll (where resolution swapping loads full-resolution images).
    var restFrames: Int
    /// The refresh interval (1/60 s).
    var budgetSeconds: Double
    /// Whether each frame waits for the next refresh tick when it finishes early.
    var paced: Bool
    /// The size of low-resolution thumbnails shown while moving, when swapping.
    var lowResolutionSize: PixelSize
    /// Largest number of decoded images the memory-cache method keeps.
    var memoryCacheLimit: Int

    /// The directory of the image tables.
    var tableDirectory: URL { URL(fileURLWithPath: workDirectory).appendingPathComponent("tables", isDirectory: true) }

    /// The full-resolution table format (cell size, premultiplied BGRA).
    var fullFormat: ImageFormat {
        ImageFormat(name: "demo-thumb", family: "demo", style: .bgra32, size: grid.cellSize, maximumCount: max(1, grid.itemCount))
    }

    /// The low-resolution table format of the same family (RGB 565).
    var lowFormat: ImageFormat {
        ImageFormat(name: "demo-tiny", family: "demo", style: .bgr565, size: lowResolutionSize, maximumCount: max(1, grid.itemCount))
    }

    /// Total frames of one run.
    var totalFrames: Int { movingFrames + restFrames }

    /// The scroll offset of `frame`: steady speed while moving, then still.
    func offset(ofFrame frame: Int) -> Int { min(frame, movingFrames) * pixelsPerFrame }

    /// Reads a configuration file.
    static func load(_ path: String) throws -> DemoConfiguration {
        try JSONDecoder().decode(DemoConfiguration.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes the configuration to `path`.
    func save(_ path: String) throws {
        try JSONEncoder().encode(self).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
}
