#if Serving
import Foundation
import Tessera

/// Signs an ``ImageManager``'s requests to an S3-compatible store with AWS Signature Version 4
/// (``S3Signer``): each load, retries included, is signed afresh with the time it is sent.
///
/// Every load of the manager is a `GET` without a body; the signature covers `host`, `x-amz-date`,
/// `x-amz-content-sha256` (`UNSIGNED-PAYLOAD`) and the session token. The conditional headers the
/// loader adds for a revalidation (`If-None-Match`) are sent unsigned, which SigV4 allows.
struct S3RequestSigner: RequestAuthorizing {
    let signer: S3Signer

    init(credentials: S3Credentials, region: String) {
        signer = S3Signer(credentials: credentials, region: region)
    }

    func authorize(_ request: inout LoadRequest, attempt: AuthorizationAttempt) async throws {
        for (name, value) in signer.sign(method: "GET", url: request.url, date: Date()) {
            request.headers[name] = value
        }
    }
}
#endif
