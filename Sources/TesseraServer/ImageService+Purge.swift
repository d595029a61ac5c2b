#if Serving
import Foundation
import Tessera

extension ImageService {
    /// What a purge dropped (``ImageService/purge(source:)``), counted for the answer's
    /// `X-Tessera-Purged` field and the log.
    public struct PurgeReport: Sendable, Hashable, CustomStringConvertible {
        /// Table entries removed: at most one per preset (a table holds one entry per source).
        public var tableEntries = 0
        /// Encoded answers removed from the memory cache: one per size, format and option set asked for.
        public var responses = 0
        /// Copies of the source's bytes removed from disk: a remote URL's, a bucket's or an origin's object (0 or 1).
        public var storedCopies = 0

        /// Nothing dropped yet.
        public init() {}

        /// `tables=N responses=N copies=N`, the `X-Tessera-Purged` field.
        public var description: String { "tables=\(tableEntries) responses=\(responses) copies=\(storedCopies)" }
    }

    /// How a source's object or file is named in the tables and the purge (``ServeRequest/sourceIdentity``):
    /// `@SOURCE/KEY`, for an object store's object and for a file of a directory source alike.
    static func namedIdentity(source: String, key: String) -> String { "@" + source + "/" + key }

    /// Drops everything this service keeps of the source `src`, named as `/v1/resize`'s `src` names one:
    /// a path under the root (`photos/cat.jpg`), `@NAME/KEY` in a named source, `s3://BUCKET/KEY` in an
    /// allowed bucket, or an `http(s)` URL. Its entry in every preset's table, every encoded answer made
    /// from it (every size and format), and, for objects and URLs, the copy of its bytes on disk and the
    /// version last seen. The next request for it reads the source again and makes its answer again.
    ///
    /// A source nothing is kept of purges to an empty report: purging is idempotent. A request for the
    /// source already running when the purge comes may still store what it made.
    /// - Throws: ``ServiceError`` when `src` is malformed or names a source this service does not have.
    public func purge(source src: String) async throws(ServiceError) -> PurgeReport {
        var report = PurgeReport()
        let identity: String
        switch try SourceName(src) {
        case .url(let text):
            guard let url = URL(string: text), let host = url.host, !host.isEmpty else { throw ServiceError(.badSource, "src is not a valid URL") }
            identity = url.absoluteString
            if let remote {
                let request = ImageRequest(url: url)
                if remote.manager.cache.contains(request, in: .disk) { report.storedCopies += 1 }
                await remote.manager.cache.remove(request)
            }
        case .bucketObject(let bucket, let key):
            guard let store = buckets[bucket] else { throw ServiceError(.unknownSource, "bucket '\(bucket)' is not allowed") }
            try RootDirectory.checkSyntax(key)
            identity = Self.namedIdentity(source: store.name, key: key)
            if await store.forget(key) { report.storedCopies += 1 }
        case .path(let path) where path.hasPrefix("@"):
            let (name, key) = try Self.split(path)
            try RootDirectory.checkSyntax(key)
            switch sources[name] {
            case .directory:
                identity = Self.namedIdentity(source: name, key: key)   // as RootDirectory.File.named names it
            case .objects(let store):
                identity = Self.namedIdentity(source: store.name, key: key)
                if await store.forget(key) { report.storedCopies += 1 }
            case nil:
                throw ServiceError(.unknownSource, "no source named '\(name)'")
            }
        case .path(let path):
            try RootDirectory.checkSyntax(path)
            identity = path
        }
        for table in presets.values where table.forget(identity: identity) { report.tableEntries += 1 }
        report.responses = responses.removeAll(source: identity)
        metrics.responseCacheBytes.set(responses.byteCount)
        return report
    }
}
#endif
