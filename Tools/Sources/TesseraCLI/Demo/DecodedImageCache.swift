import Tessera

/// A memory cache of decoded images keyed by item, evicting the least recently used beyond a count
/// limit (the role `NSCache` with `countLimit` plays in the chapter). Used on one thread only.
struct DecodedImageCache {
    private var entries: [Int: (bitmap: Bitmap, lastUse: Int)] = [:]
    private var clock = 0
    /// The most images kept.
    let limit: Int

    init(limit: Int) { self.limit = max(1, limit) }

    /// Number of images held.
    var count: Int { entries.count }

    /// The image of `item`, marking it recently used.
    mutating func image(for item: Int) -> Bitmap? {
        guard let entry = entries[item] else { return nil }
        clock += 1
        entries[item] = (entry.bitmap, clock)
        return entry.bitmap
    }

    /// The image of `item` without touching its recency.
    func peek(_ item: Int) -> Bitmap? { entries[item]?.bitmap }

    /// Adds `bitmap` for `item`, evicting the least recently used entry beyond the limit.
    mutating func insert(_ bitmap: Bitmap, for item: Int) {
        clock += 1
        entries[item] = (bitmap, clock)
        if entries.count > limit, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries[oldest] = nil
        }
    }
}
