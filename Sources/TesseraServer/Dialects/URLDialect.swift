#if Serving
import Foundation
import Hummingbird

/// The URL language a request came in: Tessera's own routes, or imgproxy's or thumbor's URLs. Each
/// dialect is a parser to an ``ImageAsk``; below it nothing knows which one asked, except here, where an
/// error gets the status that dialect's clients expect (the body keeps Tessera's JSON code).
enum URLDialect: Sendable, Hashable {
    case tessera, imgproxy, thumbor

    /// The status `code` answers with in this dialect.
    ///
    /// - imgproxy answers every malformed URL, bad option and unknown preset `404 Invalid URL`, a bad
    ///   signature and a security option `403`, a source it cannot read as an image (or one over its limits)
    ///   `422`, a source it may not fetch `404`, an expired URL `404`.
    /// - thumbor answers a malformed URL, a bad signature, `unsafe/` when it is not allowed and an
    ///   undecodable source `400`, a missing file `404`.
    /// Timeouts, upstream failures and a full queue keep Tessera's statuses in both.
    func status(for code: ServiceError.Code) -> HTTPResponse.Status {
        switch self {
        case .tessera:
            return code.status
        case .imgproxy:
            switch code {
            case .badSignature, .missingSignature, .optionNotAllowed: return .forbidden
            case .undecodableSource, .sourceTooLarge, .sourceTooManyPixels, .sourceTooManyItems: return .unprocessableContent
            case .remoteDisabled, .remoteRefused, .pathOutsideRoot, .expired: return .notFound
            default: return code.status == .badRequest ? .notFound : code.status
            }
        case .thumbor:
            switch code {
            case .badSignature, .missingSignature, .optionNotAllowed, .remoteDisabled, .remoteRefused: return .badRequest
            case .undecodableSource, .sourceTooLarge, .sourceTooManyPixels, .sourceTooManyItems: return .badRequest
            case .pathOutsideRoot, .pathEscape: return .notFound
            default: return code.status
            }
        }
    }
}

extension URLDialect {
    /// The bytes of base64url text (`-` and `_`; `=` padding refused unless `padded`, and then required), or `nil`.
    static func base64URL(_ text: some StringProtocol, padded: Bool) -> [UInt8]? {
        guard padded || !text.contains("="), !text.contains("+"), !text.contains("/") else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        if !padded { while base64.count % 4 != 0 { base64 += "=" } }
        return Data(base64Encoded: base64).map(Array.init)
    }

    /// Whether a signature equals the expected one, compared in time that does not depend on where they differ.
    static func signatureMatches(_ given: some Collection<UInt8>, _ expected: some Collection<UInt8>) -> Bool {
        given.count == expected.count && zip(given, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension ServiceError {
    /// The error as `dialect`'s clients expect it: that dialect's status (``URLDialect/status(for:)``),
    /// Tessera's JSON body and `no-store`.
    func answer(in dialect: URLDialect) -> RouteAnswer {
        RouteAnswer(status: dialect == .tessera ? status : dialect.status(for: code), headers: headers, body: ByteBuffer(bytes: jsonBody))
    }
}
#endif
