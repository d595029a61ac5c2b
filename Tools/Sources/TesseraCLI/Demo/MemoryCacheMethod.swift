import Tessera
import TesseraMeasurement

/// Method 3 (the chapter's `NSCache` technique): decoded cell-sized images live in a memory cache
/// with a count limit; a miss shows a placeholder and loads in the background (a marker prevents
/// loading the same item twice), and every cell that becomes visible also prefetches its
/// neighbours in the scrolling direction (the item one row below and one row above).
final class MemoryCacheMethod: FrameMethod {
    private let loader: BackgroundLoader
    private let grid: ScrollingGrid
    private let inbox = Inbox<Bitmap?>()
    private var cache: DecodedImageCache
    private var inFlight: Set<Int> = []
    private var failed: Set<Int> = []
    private(set) var failures = 0
    /// Loads started for neighbours rather than for a visible cell.
    private(set) var prefetches = 0

    init(paths: [String], size: PixelSize, grid: ScrollingGrid, limit: Int) {
        loader = BackgroundLoader(paths: paths, size: size)
        self.grid = grid
        cache = DecodedImageCache(limit: limit)
    }

    func beginFrame() {
        for (item, bitmap) in inbox.takeAll() {
            inFlight.remove(item)
            if let bitmap { cache.insert(bitmap, for: item) } else { failed.insert(item); failures += 1 }
        }
    }

    func image(for item: Int, resolution: Resolution) -> (any BitmapImage)? {
        for neighbour in grid.verticalNeighbours(of: item) where cache.peek(neighbour) == nil {
            if start(neighbour) { prefetches += 1 }
        }
        if let hit = cache.image(for: item) { return hit }
        start(item)
        return nil
    }

    var pendingLoads: Int { inFlight.count }

    @discardableResult
    private func start(_ item: Int) -> Bool {
        guard !inFlight.contains(item), !failed.contains(item) else { return false }
        inFlight.insert(item)
        loader.load(item, into: inbox)
        return true
    }
}
