import TesseraImaging
import TesseraTables
import Foundation

/// A cache of decoded images kept in memory, consulted by ``ImageManager`` before anything else.
///
/// Implementations must be safe to call from any thread and must never block on I/O: lookups happen
/// on the requesting task. ``MemoryCache`` is the default.
public protocol MemoryCaching: Sendable {
    /// The image for `key`, counted as a use, or `nil`.
    func image(for key: ImageKey) -> Bitmap?
    /// Stores `image` under `key`; its cost is `image.layout.byteCount`.
    func insert(_ image: Bitmap, for key: ImageKey)
    /// Removes the image for `key`.
    func removeImage(for key: ImageKey)
    /// Removes every image.
    func removeAll()
    /// Removes least recently used images until the total cost is at most `cost` bytes.
    func trim(toCost cost: Int)
    /// The sum of the costs of the cached images, in bytes.
    var totalCost: Int { get }
    /// Counts and counters since creation.
    var statistics: MemoryCache.Statistics { get }
    /// The current limits.
    var configuration: MemoryCache.Configuration { get }
    /// Replaces the limits and evicts until they hold.
    func setLimits(_ configuration: MemoryCache.Configuration)
}
