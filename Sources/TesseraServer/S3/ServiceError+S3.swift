#if Serving
import Foundation

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
