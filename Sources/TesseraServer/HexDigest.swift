#if Serving
import Crypto
import Foundation

/// The first `bytes` bytes of the SHA-256 of `data`, in lower-case hex (2 × `bytes` digits): the one way
/// the service names content by its digest (preset table names, watermark versions, object and remote
/// versions).
func hexDigest(_ data: Data, bytes: Int) -> String {
    SHA256.hash(data: data).prefix(bytes).map { String(format: "%02x", $0) }.joined()
}
#endif
