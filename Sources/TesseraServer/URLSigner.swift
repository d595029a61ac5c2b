#if Serving
import Crypto
import Foundation

/// Signed URLs: `s` = base64url (no padding) of HMAC-SHA256 over the request path (as sent, percent-encoded)
/// followed, when any other parameter is present, by `?` and the raw query without the `s` parameter
/// (parameters in the order sent). Several keys are accepted at once, for rotation: a URL signed with any
/// configured key passes; a key removed from the configuration (retired) no longer does.
public struct URLSigner: Sendable {
    private let keys: [(id: String, key: SymmetricKey)]

    /// A signer that accepts a signature made with any of `keys` (each key's secret, as UTF-8 bytes, is the
    /// HMAC-SHA256 key).
    public init(keys: [ServerConfiguration.SigningKey]) {
        self.keys = keys.map { ($0.id, SymmetricKey(data: Data($0.secret.utf8))) }
    }

    /// The message that is signed for `path` and `rawQuery` (the `s` parameter removed).
    public static func message(path: String, rawQuery: String?) -> String {
        let rest = (rawQuery ?? "").split(separator: "&").filter { !$0.hasPrefix("s=") }.joined(separator: "&")
        return rest.isEmpty ? path : path + "?" + rest
    }

    /// The `s` value for `path` and `rawQuery` with `secret`.
    public static func signature(path: String, rawQuery: String?, secret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(message(path: path, rawQuery: rawQuery).utf8),
                                                  using: SymmetricKey(data: Data(secret.utf8)))
        return Data(mac).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Throws 403 unless the request carries a signature by one of the keys (compared in constant time).
    func verify(path: String, rawQuery: String?) throws(ServiceError) {
        guard let given = (rawQuery ?? "").split(separator: "&").first(where: { $0.hasPrefix("s=") })?.dropFirst(2) else {
            throw ServiceError(.missingSignature, "this server serves signed URLs only")
        }
        var base64 = given.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let mac = Data(base64Encoded: base64) else { throw ServiceError(.badSignature, "the signature is not valid") }
        let message = Data(Self.message(path: path, rawQuery: rawQuery).utf8)
        for (_, key) in keys where HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: message, using: key) { return }
        throw ServiceError(.badSignature, "the signature is not valid")
    }
}
#endif
