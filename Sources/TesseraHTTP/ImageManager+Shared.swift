#if HTTPLoader
import Foundation
import Tessera

extension ImageManager {
    /// The shared default manager: `ImageManager/Configuration/standard` (memory cache, disk cache in
    /// `ImageManager/Configuration/defaultDiskDirectory`) over ``HTTPDataLoader/shared``. It lives in
    /// `TesseraHTTP` because the core library has no network loader. When the cache directory cannot be
    /// created the manager works without a disk cache.
    public static let shared: ImageManager = {
        let configuration = ImageManager.Configuration.standard
        if let manager = try? ImageManager(configuration: configuration, loader: HTTPDataLoader.shared) { return manager }
        var memoryOnly = configuration
        memoryOnly.disk = nil
        return ImageManager(configuration: memoryOnly, loader: HTTPDataLoader.shared,
                            memoryCache: MemoryCache(configuration: configuration.memory), diskCache: nil)
    }()
}
#endif
