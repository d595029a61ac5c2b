#if Serving
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging
import Tessera

/// The objects of an S3-compatible bucket under a prefix, read with ``S3Client``: versions are the
/// objects' ETags (with the version id where the bucket keeps versions), learnt with a `HEAD` the first
/// time and revalidated with a conditional GET once a check is older than the source check interval.
/// The bytes of the objects read last are kept (``recentBytesCapacity``), so that the presets and sizes
/// of one object made one after another read it once.
final class BucketStore: ObjectStore {
    /// Bytes of recently read objects kept in memory: 64 MiB.
    static let recentBytesCapacity = 64 << 20

    let name: String
    let client: S3Client
    let bucket: String
    /// Empty, or ending in `/`: put before every key.
    let prefix: String
    let maximumBytes: Int
    private let versions = VersionTable()
    /// Bytes by key and version tag, least recently used out first.
    private let recent = LockedValue(LRUMap<String, Data>())
    /// Object reads that returned bytes (`tessera_source_downloads_total{source}`).
    private let downloads: Counter

    init(name: String, client: S3Client, bucket: String, prefix: String, maximumBytes: Int, metrics: any MetricsFactory) {
        self.name = name
        self.client = client
        self.bucket = bucket
        self.prefix = prefix
        self.maximumBytes = maximumBytes
        downloads = Counter(label: "tessera_source_downloads_total", dimensions: [("source", name)], factory: metrics)
    }

    func current(_ key: String, recheckSeconds: Double) async throws(ServiceError) -> ObjectVersion {
        guard let known = versions.get(key) else { return try await head(key) }
        if VersionTable.isRecent(known, within: recheckSeconds) { return ObjectVersion(tag: known.tag, data: nil) }
        return try await read(key, ifNoneMatch: known)
    }

    func bytes(of key: String, version tag: String) async throws(ServiceError) -> Data {
        if let kept = recent.withLock({ $0.touch(Self.recentKey(key, tag))?.value }) { return kept }
        return try await read(key, ifNoneMatch: nil).bytes(of: key, expecting: tag)
    }

    func recentVersion(of key: String, within seconds: Double) -> ObjectVersion? { versions.recent(key, within: seconds) }

    /// The version of `key` from a `HEAD` (no bytes); a GET when the store gives no ETag.
    private func head(_ key: String) async throws(ServiceError) -> ObjectVersion {
        let info: S3ObjectInfo
        do { info = try await client.head(bucket: bucket, key: prefix + key) } catch { throw ServiceError(error) }
        if let length = info.contentLength, length > maximumBytes {
            throw ServiceError(.sourceTooLarge, "the source has \(length) bytes, more than the limit of \(maximumBytes)")
        }
        guard let etag = info.etag else { return try await read(key, ifNoneMatch: nil) }
        let tag = Self.tag(etag: etag, versionID: info.versionID, data: Data())
        versions.record(key, VersionTable.Seen(validator: etag, tag: tag, checkedAt: .now))
        return ObjectVersion(tag: tag, data: nil)
    }

    /// One GET of `key`, conditional on `known`'s ETag when given: a `304` confirms `known`. Bytes read
    /// are kept under their version.
    private func read(_ key: String, ifNoneMatch known: VersionTable.Seen?) async throws(ServiceError) -> ObjectVersion {
        let result: S3GetResult
        do {
            result = try await client.get(bucket: bucket, key: prefix + key, ifNoneMatch: known?.validator, maximumBytes: maximumBytes)
        } catch {
            throw ServiceError(error)
        }
        switch result {
        case .notModified:
            guard var known else { throw ServiceError(.upstreamFailed, "the store answered 304 to a request without a condition") }
            known.checkedAt = .now
            versions.record(key, known)
            return ObjectVersion(tag: known.tag, data: nil)
        case .object(let data, let etag, let versionID, _):
            downloads.increment()
            let tag = Self.tag(etag: etag, versionID: versionID, data: data)
            if let etag { versions.record(key, VersionTable.Seen(validator: etag, tag: tag, checkedAt: .now)) }
            recent.withLock { recent in
                recent.insert(Self.recentKey(key, tag), value: data, cost: data.count)
                while recent.totalCost > Self.recentBytesCapacity, recent.removeOldest() != nil {}
            }
            return ObjectVersion(tag: tag, data: data)
        }
    }

    private static func recentKey(_ key: String, _ tag: String) -> String { key + "\u{0}" + tag }

    /// The version text of an object: its ETag without quotes and its version id, else a digest of its bytes.
    static func tag(etag: String?, versionID: String?, data: Data) -> String {
        guard let etag else { return ObjectVersion.digest(of: data) }
        let bare = etag.replacingOccurrences(of: "\"", with: "")
        return versionID.map { bare + "@" + $0 } ?? bare
    }

    func shutdown() async { try? await client.shutdown() }
}

extension ServiceError {
    /// The service's answer to a store's failure: a missing key or bucket is `404 not_found`; credentials
    /// the store refuses are the operator's mistake, `502 source_denied`; the store's own failures are
    /// `502 upstream_status`, `504 upstream_timeout` or `502 upstream_failed`; an object over the size
    /// limit `413 source_too_large`; a key longer than S3 allows (the client's, refused before the store is
    /// asked) `400 bad_path`.
    init(_ failure: S3Error) {
        switch failure {
        case .noSuchKey, .noSuchBucket: self.init(.notFound, failure.description)
        case .accessDenied, .signatureDoesNotMatch, .invalidAccessKeyID, .invalidToken: self.init(.sourceDenied, failure.description)
        case .tooLarge(let bytes, let limit): self.init(.sourceTooLarge, "the source has \(bytes) bytes, more than the limit of \(limit)")
        case .storeFailed: self.init(.upstreamStatus, failure.description)
        case .timeout: self.init(.upstreamTimeout, "the store did not answer in time")
        case .invalidRequest: self.init(.badPath, failure.description)
        case .keyTooLong(let bytes, let limit):
            self.init(.badPath, "the object key (the source's prefix included) has \(bytes) bytes, more than S3's limit of \(limit)")
        case .cancelled: self.init(.cancelled, "the request was cancelled")
        case .unexpectedResponse, .transport: self.init(.upstreamFailed, failure.description)
        }
    }
}
#endif
