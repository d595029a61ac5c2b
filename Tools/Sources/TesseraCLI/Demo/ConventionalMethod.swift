import Foundation
import Tessera

/// Method 1: on the frame thread, read the file, decode it (with the codec's cheap downscaling) and
/// scale it to the cell — what a naive grid does in `cellForItemAt`.
final class ConventionalMethod: FrameMethod {
    private let paths: [String]
    private let fullSize: PixelSize
    private let lowSize: PixelSize
    private let decoder = ImageDecoder()
    private var failed: Set<Int> = []
    private(set) var failures = 0

    init(paths: [String], fullSize: PixelSize, lowSize: PixelSize) {
        self.paths = paths
        self.fullSize = fullSize
        self.lowSize = lowSize
    }

    func beginFrame() {}

    func image(for item: Int, resolution: Resolution) -> (any BitmapImage)? {
        guard !failed.contains(item) else { return nil }
        do {
            let data = try ImageFiles.read(paths[item])
            return try decoder.thumbnail(data, size: resolution == .low ? lowSize : fullSize, mode: .fill)
        } catch {
            failed.insert(item)
            failures += 1
            return nil
        }
    }
}
