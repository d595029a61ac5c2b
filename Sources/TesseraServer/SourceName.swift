#if Serving
import Foundation

/// What a `src` names (`/v1/resize`'s, an imgproxy or thumbor URL's, a purge's), told apart once by its
/// prefix: an `http(s)` URL, `s3://BUCKET/KEY`, or a path (under the root, or `@NAME/KEY` in a named
/// source). Whether the host, bucket or source is allowed, and the key's syntax, are the caller's to check.
enum SourceName: Equatable {
    /// An `http://` or `https://` URL, as given.
    case url(String)
    /// `s3://BUCKET/KEY`, split at the first `/` after the bucket.
    case bucketObject(bucket: String, key: String)
    /// A path under the root, or `@NAME/KEY`.
    case path(String)

    /// Parses `src` (case-insensitive schemes).
    /// - Throws: ``ServiceError`` `badSource` for another scheme, `badPath` for `s3://` without a bucket and a key.
    init(_ src: String) throws(ServiceError) {
        let lowered = src.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            self = .url(src)
        } else if lowered.hasPrefix("s3://") {
            let (bucket, key) = try ImageService.split("@" + src.dropFirst("s3://".count))
            self = .bucketObject(bucket: bucket, key: key)
        } else if lowered.contains("://") {
            throw ServiceError(.badSource, "src is a path under the root, @SOURCE/KEY, s3://BUCKET/KEY or an http(s) URL")
        } else {
            self = .path(src)
        }
    }
}
#endif
