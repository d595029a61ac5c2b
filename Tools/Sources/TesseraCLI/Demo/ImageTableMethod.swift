import Foundation
import Tessera

/// Method 4: image tables through ``ImageCache``. The frame thread asks `cachedImage(for:format:)`,
/// a synchronous lookup in the memory-mapped table that never decodes; on a miss the cell shows a
/// placeholder and `image(for:format:)` loads the source through the cache's provider in the
/// background (one decode fills both formats of the family).
final class ImageTableMethod: FrameMethod {
    private let cache: ImageCache
    private let photos: [DemoPhoto]
    private let full: ImageFormat
    private let low: ImageFormat
    private let inbox = Inbox<Bool>()
    private var inFlight: Set<Int> = []
    private var failed: Set<Int> = []
    private(set) var failures = 0
    /// Lookups that missed.
    private(set) var misses = 0

    init(cache: ImageCache, photos: [DemoPhoto], full: ImageFormat, low: ImageFormat) {
        self.cache = cache
        self.photos = photos
        self.full = full
        self.low = low
    }

    func beginFrame() {
        for (key, ok) in inbox.takeAll() {
            inFlight.remove(key)
            if !ok { failed.insert(key); failures += 1 }
        }
    }

    func image(for item: Int, resolution: Resolution) -> (any BitmapImage)? {
        let format = resolution == .low ? low : full
        if let hit = cache.cachedImage(for: photos[item], format: format) { return hit }
        misses += 1
        let key = item * 2 + (resolution == .low ? 1 : 0)
        if !inFlight.contains(key), !failed.contains(key) {
            inFlight.insert(key)
            let cache = cache, photo = photos[item], inbox = inbox
            Task.detached {
                do {
                    _ = try await cache.image(for: photo, format: format)
                    inbox.put(key, true)
                } catch {
                    inbox.put(key, false)
                }
            }
        }
        return nil
    }

    var pendingLoads: Int { inFlight.count }
}
