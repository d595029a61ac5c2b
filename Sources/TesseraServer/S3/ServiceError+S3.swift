#if Serving
import Foundation

extension ServiceError {
    /// The service's answer to a key that cannot be addressed: `400 bad_path`.
    init(_ failure: S3Error) {
        switch failure {
        case .invalidRequest: self.init(.badPath, failure.description)
        case .keyTooLong(let bytes, let limit):
            self.init(.badPath, "the object key (the source's prefix included) has \(bytes) bytes, more than S3's limit of \(limit)")
        }
    }
}
#endif
