@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

extension ImageManager {
    /// The manager's caches, addressed by request (``Cache``): what a request would find, store, remove.
    public var cache: Cache { Cache(manager: self) }

    /// The memory and disk caches of an ``ImageManager``, addressed the way requests address them: by the
    /// request's identity (its URL or ``ImageRequest/cacheKey``) and, in memory, its
    /// variant (size, content mode, processing). Each method takes the layers it acts on.
    ///
    /// ```swift
    /// let request = ImageRequest(url: url, cacheKey: "avatars/42")
    /// if manager.cache.contains(request, in: .disk) { … }
    /// try await manager.cache.store(jpegBytes, for: request)              // on disk, and decoded in memory
    /// let cached = await manager.cache.cachedImage(for: request)          // memory, else disk (decoded)
    /// await manager.cache.remove(request, from: .memory)
    /// ```
    public struct Cache: Sendable {
        /// Cache layers.
        public struct Layers: OptionSet, Sendable, Hashable {
            /// The raw bits.
            public let rawValue: Int
            /// Creates layers from raw bits.
            public init(rawValue: Int) { self.rawValue = rawValue }

            /// The memory cache of decoded images (per variant).
            public static let memory = Layers(rawValue: 1 << 0)
            /// The disk cache of downloaded bytes (per image, shared by its variants).
            public static let disk = Layers(rawValue: 1 << 1)
            /// Both.
            public static let all: Layers = [.memory, .disk]
        }

        let manager: ImageManager

        /// Whether a layer of `layers` holds `request`'s image: its variant in memory, or its bytes on disk
        /// (from the disk cache's index). No I/O, no decoding, and no use counted.
        public func contains(_ request: ImageRequest, in layers: Layers = .all) -> Bool {
            guard let (_, key) = try? ImageManager.resolve(request) else { return false }
            if layers.contains(.memory), manager.memoryCache?.contains(key) == true { return true }
            return layers.contains(.disk) && manager.diskCache?.contains(key.url) == true
        }

        /// `request`'s image from the first layer of `layers` that holds it: its variant from memory, or
        /// its bytes from disk decoded to that variant (and then kept in memory when `layers` has memory).
        /// `nil` when neither holds it or the bytes do not decode. Never touches the network.
        public func cachedImage(for request: ImageRequest, in layers: Layers = .all) async -> ImageResponse? {
            guard let (_, key) = try? ImageManager.resolve(request) else { return nil }
            if layers.contains(.memory), let image = manager.memoryCache?.image(for: key) {
                return ImageResponse(image: image, request: request, cacheType: .memory)
            }
            guard layers.contains(.disk), let disk = manager.diskCache, let entry = await disk.entry(for: key.url),
                  let decoded = try? await manager.pipeline.decoded(FetchedData(data: entry.data, cacheType: .disk), for: key) else {
                return nil
            }
            if layers.contains(.memory), let bitmap = decoded.bitmap { manager.memoryCache?.insert(bitmap, for: key) }
            return decoded.response(to: request)
        }

        /// The encoded bytes of `request`'s image in the disk cache (fresh or stale), or `nil`.
        public func cachedData(for request: ImageRequest) async -> Data? {
            guard let (_, key) = try? ImageManager.resolve(request) else { return nil }
            return await manager.diskCache?.entry(for: key.url)?.data
        }

        /// Puts `image` in the memory cache as `request`'s variant.
        public func store(_ image: Bitmap, for request: ImageRequest) {
            guard let (_, key) = try? ImageManager.resolve(request) else { return }
            manager.memoryCache?.insert(image, for: key)
        }

        /// Stores the encoded bytes of `request`'s image: on disk (fresh for
        /// ``ImageManager/Configuration/defaultMaxAge``, no validators) and, with `.memory`, decoded to the
        /// request's variant in memory.
        /// - Throws: ``/TesseraCore/TesseraError``: the disk cache's write failure, or a decoding failure
        ///   when `layers` has memory and `data` is no image.
        public func store(_ data: Data, for request: ImageRequest, in layers: Layers = .all) async throws(TesseraError) {
            let (_, key) = try ImageManager.resolve(request)
            if layers.contains(.disk), let disk = manager.diskCache {
                let now = manager.pipeline.now()
                let info = HTTPCacheInfo(url: key.url.absoluteString, storedAt: now,
                                         expiresAt: now.addingTimeInterval(manager.configuration.defaultMaxAge.timeInterval))
                try await disk.store(data, info: info, for: key.url)
            }
            if layers.contains(.memory), let memory = manager.memoryCache {
                do {
                    let decoded = try await manager.pipeline.decoded(FetchedData(data: data, cacheType: .local), for: key)
                    if let bitmap = decoded.bitmap { memory.insert(bitmap, for: key) }
                } catch {
                    throw TesseraError.wrapping(error) { TesseraError(.drawing(message: "\($0)"), underlying: $0) }
                }
            }
        }

        /// Removes `request`'s image from `layers`: its variant from memory, its bytes from disk (which
        /// every variant shares). Without its bytes on disk, its image tables (``ImageManager/Configuration/tables``)
        /// answer it again only once the bytes were loaded again and are the same.
        public func remove(_ request: ImageRequest, from layers: Layers = .all) async {
            guard let (_, key) = try? ImageManager.resolve(request) else { return }
            if layers.contains(.memory) { manager.memoryCache?.removeImage(for: key) }
            if layers.contains(.disk) {
                manager.pipeline.tables?.forgetSource(for: key.url)
                await manager.diskCache?.remove(key.url)
            }
        }

        /// Empties `layers`.
        /// - Throws: ``/TesseraCore/TesseraError`` when the disk cache cannot be emptied.
        public func removeAll(from layers: Layers = .all) async throws(TesseraError) {
            if layers.contains(.memory) { manager.memoryCache?.removeAll() }
            if layers.contains(.disk) {
                manager.pipeline.tables?.forgetSources()
                try await manager.diskCache?.removeAll()
            }
        }
    }
}
