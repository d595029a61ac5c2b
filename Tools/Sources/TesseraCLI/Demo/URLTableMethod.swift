import Foundation
import Tessera

/// Method 5: plain URL requests through ``ImageManager`` with image tables (`Configuration.tables`), over
/// HTTP. The frame thread asks `cachedResponse(for:)` — the memory cache (none here), then the request's
/// table, a synchronous lookup in the mapping that never decodes; on a miss the cell shows a placeholder and
/// an `imageTask(for:)` runs in the background: after a restart it finds the bytes in the disk cache and the
/// pixels in the table (no decode); on an empty table it downloads, decodes and stores.
final class URLTableMethod: FrameMethod {
    private let manager: ImageManager
    private let requests: [ImageRequest]
    private let inbox = Inbox<Bool>()
    private var inFlight: Set<Int> = []
    private var failed: Set<Int> = []
    private(set) var failures = 0

    /// A method asking `manager` for the item `n` at `urls[n]`, at `size` (aspect fill), under the cache key
    /// `items/n`: the origin's port changes from process to process, the image's identity must not.
    init(manager: ImageManager, urls: [URL], size: PixelSize) {
        self.manager = manager
        requests = urls.enumerated().map { ImageRequest(url: $1, size: size, cacheKey: "items/\($0)") }
    }

    func beginFrame() {
        for (item, ok) in inbox.takeAll() {
            inFlight.remove(item)
            if !ok { failed.insert(item); failures += 1 }
        }
    }

    func image(for item: Int, resolution: Resolution) -> (any BitmapImage)? {
        if let hit = manager.cachedResponse(for: requests[item]) { return hit.pixels }
        if !inFlight.contains(item), !failed.contains(item) {
            inFlight.insert(item)
            let task = manager.imageTask(for: requests[item]), inbox = inbox
            Task.detached {
                do {
                    _ = try await task.response
                    inbox.put(item, true)
                } catch {
                    inbox.put(item, false)
                }
            }
        }
        return nil
    }

    var pendingLoads: Int { inFlight.count }
}
