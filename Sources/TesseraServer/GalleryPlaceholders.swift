#if Serving
import Foundation
import Tessera
@_spi(Internal) import TesseraCore

/// The ThumbHashes of the gallery's listing: for each listed file, the hash of the image a preset makes of
/// it (the low-resolution one), so the page paints every cell at once and swaps in the thumbnail when it
/// arrives.
///
/// Where a hash comes from, cheapest first: this memo (keyed by the preset's recipe and the file's version,
/// size, modification time and inode, so hard links to one file share a hash); the preset's table, hashing
/// the slot's pixels in place (at most the preset's size: microseconds, no decode, also after a restart);
/// otherwise the preset's image is made through the one request path (decode, draw, table fill) and its slot
/// hashed. A listing makes hashes for at most ``ServerConfiguration/Gallery/thumbHashSeconds``: the rest of
/// a large cold directory is left out (`null`), and the next listing finds them in the tables the page's
/// thumbnails filled.
final class GalleryPlaceholders: Sendable {
    /// Hashes kept in memory (about 100 bytes each).
    static let capacity = 100_000

    private let memo = LockedValue(LRUMap<String, ThumbHash>())

    /// The hash of each of `paths` (relative to the root, decoded) in `preset`, in order; `nil` where none
    /// could be made (not an image, too tall for the preset's slots, the budget spent).
    func hashes(of paths: [String], preset: String, service: ImageService) async -> [ThumbHash?] {
        let seconds = max(0, service.configuration.gallery.thumbHashSeconds)
        let deadline = ContinuousClock.now + .nanoseconds(Int64(min(seconds, 1e9) * 1e9))
        let width = max(1, ProcessInfo.processInfo.activeProcessorCount)
        return await withTaskGroup(of: (Int, ThumbHash?).self) { group in
            var results = [ThumbHash?](repeating: nil, count: paths.count)
            var next = 0
            func start() {
                guard next < paths.count else { return }
                let index = next, path = paths[index]
                next += 1
                group.addTask { (index, await self.hash(of: path, preset: preset, service: service, makingBefore: deadline)) }
            }
            for _ in 0..<width { start() }
            while let (index, hash) = await group.next() {
                results[index] = hash
                start()
            }
            return results
        }
    }

    /// The hash of one file in `preset`; made (if nowhere else) only before `deadline`.
    func hash(of path: String, preset: String, service: ImageService, makingBefore deadline: ContinuousClock.Instant) async -> ThumbHash? {
        guard let encoded = path.percentEncodedPath else { return nil }
        let info = ImageService.RequestInfo(route: .preset(name: preset, path: encoded), path: "/v1/\(preset)/\(encoded)",
                                            rawQuery: nil, accept: nil, ifNoneMatch: nil)
        guard let request = try? service.resolve(info, trustingRecentCheck: true), let table = request.preset,
              let file = request.file else { return nil }
        let key = table.identity + "|" + file.version
        if let known = memo.withLock({ $0.touch(key)?.value }) { return known }
        var view = service.slotView(of: request)
        if view == nil, ContinuousClock.now < deadline {
            _ = try? await service.respond(to: info)   // fills the table
            view = service.slotView(of: request)
        }
        guard let view, let hash = try? ThumbHash(image: view) else { return nil }
        memo.withLock { memo in
            memo.insert(key, value: hash, cost: 1)
            while memo.count > Self.capacity { _ = memo.removeOldest() }
        }
        return hash
    }
}
#endif
