#if Serving
import Foundation
import Metrics
import Tessera

/// The ``DataLoading`` of a ``FetchedStore``'s manager: its HTTP loader, with each download (an answer
/// with bytes, not a `304`) counted once as `tessera_source_downloads_total{source}`, and the store's
/// freshness rule applied to what the manager keeps on disk.
struct SourceLoader: DataLoading {
    /// Who decides how long a disk copy is used without asking the store again.
    enum Freshness: Sendable {
        /// The store's own `Cache-Control` and `Expires` (an HTTP origin), else the manager's default age.
        case store
        /// The service: the manager's default age alone (the source check interval), whatever the
        /// object's metadata says, so that a changed object is seen within that interval (a bucket whose
        /// objects were uploaded with a year's `Cache-Control`).
        case service
    }

    private let loader: any DataLoading
    private let freshness: Freshness
    private let downloads: Counter

    init(_ loader: any DataLoading, freshness: Freshness, downloads: Counter) {
        self.loader = loader
        self.freshness = freshness
        self.downloads = downloads
    }

    func load(_ request: LoadRequest, progress: @escaping @Sendable (LoadProgress) -> Void) async throws -> LoadResponse {
        var response = try await loader.load(request, progress: progress)
        if !response.isNotModified { downloads.increment() }
        if freshness == .service {
            for name in ["cache-control", "expires", "age", "pragma"] { response.headers.removeValue(forKey: name) }
        }
        return response
    }
}
#endif
