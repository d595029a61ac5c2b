#if Serving
import Crypto
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// imgproxy's URLs, read into Tessera's terms (``ImageAsk``), as imgproxy 3's documentation and code
/// define them:
///
/// ```
/// PREFIX/{signature}/{option}/{option}…/plain/{source}[@{extension}]
/// PREFIX/{signature}/{option}/{option}…/{base64url source, split by / anywhere}[.{extension}]
/// ```
///
/// - **Signature**: base64url (no padding) of the first ``ServerConfiguration/Imgproxy/signatureSize``
///   bytes of HMAC-SHA256 under a key, over its salt followed by the path after the signature segment
///   (from its `/`, as sent: still percent-encoded, without the query). Any configured key and salt pair
///   may have signed it. With no key, any non-empty segment is accepted (`insecure`, `_`…), as imgproxy does.
/// - **Options** are the segments before the source, each `name:arg:arg…`, applied left to right
///   (``ImgproxyOptions``); the source starts at the first segment without a `:`.
/// - **Sources**: `local:///PATH` is a file under `--root`, `s3://BUCKET/KEY` an allowed bucket, and an
///   `http(s)` URL a remote source under the SSRF guard and the allowed hosts.
/// - imgproxy's `default` preset, when one is configured, is applied before the URL's options.
///
/// What imgproxy would refuse is refused (its statuses come from ``URLDialect``), and so is what it
/// would do that Tessera cannot: never a silently different image.
struct ImgproxyURLs: Sendable {
    /// The configured key and salt pairs, in order.
    private let pairs: [(key: SymmetricKey, salt: [UInt8])]
    private let signatureSize: Int
    /// Whether an answer without a format follows `Accept`.
    private let autoFormat: Bool
    /// imgproxy presets by name: their option segments.
    private let presets: [String: [Substring]]
    /// Tessera's presets by name, for `preset:NAME` when no imgproxy preset has the name.
    private let recipes: [String: ImageProcessing]
    /// The configured watermark the `watermark` option draws (`nil`: none can be drawn).
    private let watermark: String?

    /// The parser of `configuration`'s imgproxy settings: their presets parsed now (a malformed one is a
    /// configuration error).
    init(_ configuration: ServerConfiguration) throws(ServerConfigurationError) {
        let settings = configuration.imgproxy
        pairs = zip(settings.keys, settings.salts).map { key, salt in
            (SymmetricKey(data: ServerConfiguration.hexBytes(key) ?? []), ServerConfiguration.hexBytes(salt) ?? [])
        }
        signatureSize = settings.signatureSize
        autoFormat = settings.autoFormat
        recipes = Dictionary(configuration.presets.map { ($0.name, $0.processing) }, uniquingKeysWith: { first, _ in first })
        let names = configuration.watermarks.map(\.name)
        if let chosen = settings.watermark {
            guard names.contains(chosen) else {
                throw ServerConfigurationError("--imgproxy-watermark '\(chosen)' is not a configured watermark (--watermark \(chosen)=FILE)")
            }
            watermark = chosen
        } else {
            watermark = names.count == 1 ? names[0] : nil
        }
        var presets: [String: [Substring]] = [:]
        for entry in settings.presets {
            let parts = entry.split(separator: "=", omittingEmptySubsequences: false)
            let name = parts.first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? ""
            let body = parts.count == 2 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            let options = body.split(separator: "/")
            guard parts.count == 2, !name.isEmpty, !options.isEmpty, options.allSatisfy({ $0.contains(":") }) else {
                throw ServerConfigurationError("imgproxy preset '\(entry)' is not NAME=OPTION/OPTION… (each option NAME:ARGS)")
            }
            presets[name] = options
        }
        self.presets = presets
        for name in presets.keys {   // each preset applies cleanly on its own
            var options = ImgproxyOptions()
            do throws(ServiceError) { try apply(["pr:" + name], to: &options, chain: []) } catch {
                throw ServerConfigurationError("imgproxy preset '\(name)': \(error.message)")
            }
        }
    }

    /// The ask of `path` (the part after the prefix, as sent), with the request's `Accept`.
    func ask(path: String, accept: String?) throws(ServiceError) -> ImageAsk {
        guard let slash = path.firstIndex(of: "/"), slash != path.startIndex else {
            throw ServiceError(.notFound, "an imgproxy URL is /SIGNATURE/OPTIONS…/SOURCE")
        }
        let signature = path[..<slash]
        let signed = Self.repaired(String(path[slash...]))
        try verify(signature: signature, path: signed)
        var segments = signed.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        let optionCount = segments.firstIndex { !$0.contains(":") } ?? segments.count
        let optionSegments = Array(segments[..<optionCount])
        segments.removeFirst(optionCount)
        var options = ImgproxyOptions()
        if presets["default"] != nil { try apply(["pr:default"], to: &options, chain: []) }
        try apply(optionSegments, to: &options, chain: [])
        let (source, ext) = try Self.source(segments)
        if let ext { try options.apply(name: "format", ArraySlice([Substring(ext)])) }
        if let expires = options.expires, expires > 0, expires < Int(Date().timeIntervalSince1970) {
            throw ServiceError(.expired, "the URL expired at \(expires)")
        }
        let output = try OutputChoice(fmt: options.format?.rawValue, accept: accept, negotiates: autoFormat,
                                      keepsSourceFormats: [.jpeg, .png, .gif])
        return ImageAsk(source: try Self.tesseraSource(source), processing: try options.processing(watermark: watermark), output: output,
                        quality: try options.quality(for: output.chosenFormat), disposition: try options.disposition(), expires: options.expires)
    }

    /// Applies `segments` (`name:args…`) in order; `pr:`/`preset:` applies its presets' segments where it
    /// stands (a preset already being applied, in `chain`, is skipped, as imgproxy does).
    private func apply(_ segments: [Substring], to options: inout ImgproxyOptions, chain: Set<String>) throws(ServiceError) {
        for segment in segments {
            let parts = segment.split(separator: ":", omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard name == "preset" || name == "pr" else {
                try options.apply(name: name, parts.dropFirst())
                continue
            }
            for preset in parts.dropFirst().map(String.init) where !chain.contains(preset) {
                if let body = presets[preset] {
                    try apply(body, to: &options, chain: chain.union([preset]))
                } else if let recipe = recipes[preset] {
                    options.apply(recipe)
                } else {
                    throw ServiceError(.unknownPreset, "no imgproxy or Tessera preset named '\(preset)'")
                }
            }
        }
    }

    /// Throws `bad_signature` unless `signature` signs `path` under a configured pair (compared in
    /// constant time); with no pair configured, any signature passes.
    private func verify(signature: Substring, path: String) throws(ServiceError) {
        guard !pairs.isEmpty else { return }
        guard let mac = URLDialect.base64URL(signature, padded: false) else {
            throw ServiceError(.badSignature, "the signature is not base64url without padding")
        }
        for pair in pairs {
            var message = Data(pair.salt)
            message.append(contentsOf: path.utf8)
            let digest = Array(HMAC<SHA256>.authenticationCode(for: message, using: pair.key)).prefix(signatureSize)
            if URLDialect.signatureMatches(mac, digest) { return }
        }
        throw ServiceError(.badSignature, "the signature is not by any configured key")
    }

    /// imgproxy's repairs of a path before it is checked: `%3A` in the options is `:`, and a plain source's
    /// `scheme:/x` (a proxy merged its slashes) is `scheme://x` (`local:///x` for `local`).
    static func repaired(_ path: String) -> String {
        guard let plain = path.range(of: "/plain/") else { return path.replacingOccurrences(of: "%3A", with: ":") }
        let options = path[..<plain.lowerBound].replacingOccurrences(of: "%3A", with: ":")
        var source = String(path[plain.upperBound...])
        if let colon = source.firstIndex(of: ":"), !source[..<colon].contains(where: \.isWhitespace),
           source[colon...].hasPrefix(":/"), !source[colon...].hasPrefix("://") {
            let scheme = source[..<colon]
            let rest = source[source.index(colon, offsetBy: 2)...]
            source = scheme + "://" + (scheme == "local" ? "/" : "") + rest
        }
        return options + "/plain/" + source
    }

    /// The source URL and extension of the segments after the options: `plain/URL[@EXT]` (URL
    /// percent-decoded) or base64url pieces joined (`[.EXT]` after them).
    static func source(_ segments: [Substring]) throws(ServiceError) -> (url: String, ext: String?) {
        guard let first = segments.first else { throw ServiceError(.missingSource, "the imgproxy URL has no source") }
        if first == "plain", segments.count > 1 {
            let text = segments.dropFirst().joined(separator: "/")
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count <= 2, !parts[0].isEmpty else { throw ServiceError(.badSource, "a plain source is URL[@EXTENSION], one @ at most") }
            guard let url = String(parts[0]).removingPercentEncoding else { throw ServiceError(.badSource, "the plain source is not valid percent-encoding") }
            return (url, parts.count == 2 && !parts[1].isEmpty ? String(parts[1]) : nil)
        }
        let text = segments.joined()
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { throw ServiceError(.badSource, "a base64 source is BASE64URL[.EXTENSION]") }
        var encoded = parts[0]
        while encoded.last == "=" { encoded.removeLast() }
        guard let bytes = URLDialect.base64URL(encoded, padded: false), let url = String(bytes: bytes, encoding: .utf8) else {
            throw ServiceError(.badSource, "the source is not base64url")
        }
        return (url, parts.count == 2 && !parts[1].isEmpty ? String(parts[1]) : nil)
    }

    /// An imgproxy source as `/v1/resize`'s `src`: `local:///PATH` is `PATH` under the root (its host, if
    /// any, ignored as imgproxy does); `s3://` and `http(s)://` are kept; any other scheme is refused.
    static func tesseraSource(_ url: String) throws(ServiceError) -> String {
        let lowered = url.lowercased()
        if lowered.hasPrefix("local://") {
            let rest = url.dropFirst("local://".count)
            let path = rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
            let trimmed = path.drop { $0 == "/" }
            guard !trimmed.isEmpty else { throw ServiceError(.badSource, "local:///PATH names no file") }
            return String(trimmed)
        }
        guard lowered.hasPrefix("s3://") || lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw ServiceError(.badSource, "an imgproxy source is local:///PATH, s3://BUCKET/KEY or an http(s) URL")
        }
        return url
    }
}
#endif
