import Foundation
import Tessera

/// One grid item as an ``ImageEntity``: a photo with a source URL (a file, or the loopback origin).
struct DemoPhoto: ImageEntity {
    let entityID: UUID
    let sourceImageID: UUID
    let url: URL

    /// A photo whose identity is derived from `name` (stable across processes) and its source `url`.
    init(name: String, url: URL) {
        entityID = UUID(hashing: "tessera-demo:" + name)
        sourceImageID = UUID(hashing: "tessera-demo-source:" + name)
        self.url = url
    }

    func sourceImageURL(for format: ImageFormat) -> URL? { url }
}
