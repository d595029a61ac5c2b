#if HTTPLoader
import Foundation
import Tessera
@_spi(Internal) import TesseraImaging

extension ImageManager {
    /// The shared default manager: the default `ImageManager.Configuration` (memory cache, disk cache in
    /// `ImageManager/Configuration/defaultDiskDirectory`) over ``HTTPDataLoader/shared``, with a
    /// `MemoryPressureWatcher` started on its memory cache (``sharedMemoryPressureWatcher``), so the cache
    /// is trimmed when the kernel reports memory pressure. It lives in `TesseraHTTP` because the core
    /// library has no network loader. When the cache directory cannot be created the manager works
    /// without a disk cache.
    public static let shared: ImageManager = {
        let configuration = ImageManager.Configuration()
        let manager: ImageManager
        if let made = try? ImageManager(configuration: configuration, loader: HTTPDataLoader.shared) {
            manager = made
        } else {
            var memoryOnly = configuration
            memoryOnly.disk = nil
            manager = ImageManager(configuration: memoryOnly, loader: HTTPDataLoader.shared,
                                   memoryCache: MemoryCache(configuration: configuration.memory), diskCache: nil)
        }
        if let memory = manager.memoryCache {
            let watcher = MemoryPressureWatcher(cache: memory)
            watcher.start()
            sharedWatcher.withLock { $0 = watcher }
        }
        return manager
    }()

    /// The watcher that trims ``shared``'s memory cache under memory pressure, polling once a second;
    /// `nil` until ``shared`` is first used. Stop it with `stop()` to trim only by the cache's own limits.
    public static var sharedMemoryPressureWatcher: MemoryPressureWatcher? {
        _ = shared
        return sharedWatcher.withLock { $0 }
    }

    /// Keeps the shared manager's watcher alive (a watcher stops polling when it is dropped).
    private static let sharedWatcher = LockedValue<MemoryPressureWatcher?>(nil)
}
#endif
