#if Serving
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraHTTP

/// The one ``ObjectStore``: objects of an S3 bucket or of a private HTTP origin, read through an
/// ``ImageManager`` of the store's own, so that they get everything the fetch chain does. Concurrent reads
/// of one object share one download; the bytes are kept on disk with their validators; a stale copy is
/// revalidated with a conditional GET (a `304` costs no download); the download timeout, the size
/// limit and the retries are the manager's; a bucket's requests are signed by its ``S3RequestSigner``.
///
/// The version of an object is its entity tag where the store gives one and the store is trusted to
/// (``Versioning/entityTag``, S3: an object's ETag changes whenever its bytes do), else a digest of its
/// bytes. A version confirmed less than the source check interval ago answers without a request; an
/// older one asks the manager again, whose disk copy is fresh for as long as ``Freshness`` says.
final class FetchedStore: ObjectStore {
    /// How an object's version is named.
    enum Versioning: Sendable {
        /// The store's `ETag` without quotes (a digest of the bytes when it sends none).
        case entityTag
        /// A digest of the bytes (``ObjectVersion/digest(of:)``).
        case digest
    }

    let name: String
    let manager: ImageManager
    private let loader: HTTPDataLoader
    private let location: @Sendable (String) throws(ServiceError) -> URL
    private let versioning: Versioning
    /// The service's answer to a status the store gives for a key (the rest are `502 upstream_status`).
    private let statuses: [Int: ServiceError.Code]
    private let versions = VersionTable()

    /// A store whose manager loads with `loader` (counting its downloads as `tessera_source_downloads_total{source=name}`),
    /// signs with `authorizer`, and keeps its disk cache as `configuration` says. `location` gives a key's URL.
    init(name: String, loader: HTTPDataLoader, authorizer: (any RequestAuthorizing)?, configuration: ImageManager.Configuration,
         freshness: SourceLoader.Freshness, versioning: Versioning, statuses: [Int: ServiceError.Code], decoder: ImageDecoder,
         metrics: any MetricsFactory, location: @escaping @Sendable (String) throws(ServiceError) -> URL) throws {
        self.name = name
        self.loader = loader
        self.location = location
        self.versioning = versioning
        self.statuses = statuses
        let downloads = Counter(label: "tessera_source_downloads_total", dimensions: [("source", name)], factory: metrics)
        manager = try ImageManager(configuration: configuration, loader: SourceLoader(loader, freshness: freshness, downloads: downloads),
                                   authorizer: authorizer, decoder: decoder)
    }

    func current(_ key: String, recheckSeconds: Double) async throws(ServiceError) -> ObjectVersion {
        if let known = versions.recent(key, within: recheckSeconds) { return known }
        return try await fetch(key)
    }

    func recentVersion(of key: String, within seconds: Double) -> ObjectVersion? { versions.recent(key, within: seconds) }

    func bytes(of key: String, version tag: String) async throws(ServiceError) -> Data {
        try await fetch(key).bytes(of: key, expecting: tag)
    }

    /// The bytes of `key` from the manager (its disk copy while fresh, else a download or a revalidation)
    /// and their version, recorded.
    private func fetch(_ key: String) async throws(ServiceError) -> ObjectVersion {
        let url = try location(key)
        let response: DataResponse
        do {
            response = try await manager.dataResponse(for: url)
        } catch {
            if case .fetching(.httpStatus(let code, _)) = error.reason, let meaning = statuses[code] {
                throw ServiceError(meaning, "the source \(name) answered \(code) for \(key)")
            }
            throw ServiceError.from(error)
        }
        let tag: String
        switch (versioning, response.etag) {
        case (.entityTag, let etag?): tag = etag.replacingOccurrences(of: "\"", with: "")
        default: tag = ObjectVersion.digest(of: response.data)
        }
        versions.record(key, tag: tag)
        return ObjectVersion(tag: tag, data: response.data, lastModified: response.lastModified.flatMap(ImageService.httpSeconds))
    }

    func forget(_ key: String) async -> Bool {
        versions.forget(key)
        guard let url = try? location(key) else { return false }
        let request = ImageRequest(url: url)
        let kept = manager.cache.contains(request, in: .disk)
        await manager.cache.remove(request)
        return kept
    }

    func shutdown() async { try? await loader.shutdown() }
}
#endif
