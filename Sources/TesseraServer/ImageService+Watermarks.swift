#if Serving
import Foundation
import Tessera

extension ImageService {
    /// A configured watermark, decoded: its pixels and the version its name stands for in identities.
    struct LoadedWatermark: Sendable {
        /// The image, premultiplied BGRA.
        let image: Bitmap
        /// The first 16 hex digits of the SHA-256 of the file's bytes: a changed file changes every identity
        /// (cache keys, ETags, preset tables) that draws it.
        let version: String
    }

    /// Reads and decodes each of `watermarks` with the service's `decoder` (its limits); a file that cannot
    /// be read or decoded stops the start, naming the watermark.
    static func loadWatermarks(_ watermarks: [ServerConfiguration.Watermark],
                               decoder: ImageDecoder) throws(ServerConfigurationError) -> [String: LoadedWatermark] {
        var loaded: [String: LoadedWatermark] = [:]
        for watermark in watermarks {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: watermark.file)) } catch {
                throw ServerConfigurationError("watermark '\(watermark.name)': \(watermark.file) cannot be read: \(error.localizedDescription)")
            }
            let image: Bitmap
            do { image = try decoder.decode(data) } catch {
                throw ServerConfigurationError("watermark '\(watermark.name)': \(watermark.file) cannot be decoded: \(error)")
            }
            let version = hexDigest(data, bytes: 8)
            loaded[watermark.name] = LoadedWatermark(image: image, version: version)
        }
        return loaded
    }
}
#endif
