#if Serving
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraHTTP

/// A private HTTP origin the operator trusts: keys are paths under its base URL, loaded by an
/// ``ImageManager`` of its own (the source's headers on every request, its disk cache, HTTP freshness
/// and revalidation), with no SSRF guard. The version of an object is a digest of its bytes: a check
/// younger than the source check interval answers for it, an older one asks the manager again (its disk
/// copy while fresh by the origin's `Cache-Control`, else a revalidation), so the origin's freshness rules
/// and the interval together decide when a changed object is seen.
final class OriginStore: ObjectStore {
    let name: String
    /// Ends in `/`.
    let base: URL
    let manager: ImageManager
    private let loader: HTTPDataLoader
    private let downloads: Counter
    private let versions = VersionTable()

    /// An origin at `base` whose manager keeps its disk cache in `cacheDirectory`.
    init(name: String, base: URL, headers: [String: String], cacheDirectory: URL, timeoutSeconds: Double,
         maximumBytes: Int, decoder: ImageDecoder, observability: Observability, metrics: any MetricsFactory) throws {
        self.name = name
        self.base = base
        loader = HTTPDataLoader()
        let settings = ImageManager.Configuration(disk: DiskCache.Configuration(directory: cacheDirectory),
                                                  requestTimeout: .nanoseconds(Int64(timeoutSeconds * 1e9)),
                                                  maximumResponseBytes: maximumBytes, headers: headers, observability: observability)
        manager = try ImageManager(configuration: settings, loader: loader, decoder: decoder)
        downloads = Counter(label: "tessera_source_downloads_total", dimensions: [("source", name)], factory: metrics)
    }

    /// The URL of `key` under ``base``, each path segment percent-encoded.
    func url(of key: String) throws(ServiceError) -> URL {
        guard let encoded = key.percentEncodedPath,
              let url = URL(string: encoded, relativeTo: base)?.absoluteURL else {
            throw ServiceError(.badPath, "the key cannot be made into a URL under the origin")
        }
        return url
    }

    func current(_ key: String, recheckSeconds: Double) async throws(ServiceError) -> ObjectVersion {
        if let known = versions.recent(key, within: recheckSeconds) { return known }
        return try await fetch(key)
    }

    func recentVersion(of key: String, within seconds: Double) -> ObjectVersion? { versions.recent(key, within: seconds) }

    func bytes(of key: String, version tag: String) async throws(ServiceError) -> Data {
        try await fetch(key).bytes(of: key, expecting: tag)
    }

    /// The bytes of `key` from the manager (its disk copy while fresh) and their digest, recorded.
    private func fetch(_ key: String) async throws(ServiceError) -> ObjectVersion {
        let url = try url(of: key)
        let before = manager.statistics.downloads
        let data: Data
        do {
            data = try await manager.data(for: url)
        } catch {
            if case .fetching(.httpStatus(let code, _)) = error.reason, code == 404 || code == 410 {
                throw ServiceError(.notFound, "the origin has no \(key)")
            }
            throw ServiceError.from(error)
        }
        if manager.statistics.downloads > before { downloads.increment() }
        let tag = ObjectVersion.digest(of: data)
        versions.record(key, VersionTable.Seen(validator: tag, tag: tag, checkedAt: .now))
        return ObjectVersion(tag: tag, data: data)
    }

    func shutdown() async { try? await loader.shutdown() }
}
#endif
