#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// The output format: explicit (`fmt=`) or chosen from `Accept`.
struct OutputChoice: Sendable {
    enum Format: String, Sendable {
        case jpeg, png, webp, avif
        var contentType: String { "image/\(rawValue)" }
    }

    private let explicit: Format?
    /// The best format `Accept` names: AVIF, else WebP, else `nil` (JPEG or PNG).
    private let accepted: Format?

    /// The part of the cache key and ETag that decides the format.
    var key: String { explicit.map { "f:\($0.rawValue)" } ?? accepted.map { "a:\($0.rawValue)" } ?? "a:legacy" }

    init(fmt: String?, accept: String?) throws(ServiceError) {
        if let fmt {
            switch fmt.lowercased() {
            case "jpeg", "jpg": explicit = .jpeg
            case "png": explicit = .png
            case "webp": explicit = .webp
            case "avif": explicit = .avif
            default: throw ServiceError(.badFormat, "fmt is jpeg, png, webp or avif")
            }
            accepted = nil
        } else {
            explicit = nil
            accepted = Self.accepts("image/avif", in: accept) ? .avif : Self.accepts("image/webp", in: accept) ? .webp : nil
        }
    }

    /// The format for an image with or without transparent pixels.
    func format(hasAlpha: Bool) -> Format {
        if let explicit { return explicit }
        return accepted ?? (hasAlpha ? .png : .jpeg)
    }

    /// Whether `Accept` lists `type` explicitly with a non-zero quality.
    static func accepts(_ type: String, in accept: String?) -> Bool {
        guard let accept else { return false }
        for range in accept.lowercased().split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first == type else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
        return false
    }
}
#endif
