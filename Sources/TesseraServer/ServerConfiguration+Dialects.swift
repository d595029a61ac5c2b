#if Serving
import Foundation

extension ServerConfiguration {
    /// imgproxy's URLs (`PREFIX/{signature}/{options…}/{source}`), off unless ``prefix`` is set. Its keys,
    /// salts and signature size read imgproxy's own variables (`IMGPROXY_KEY`, `IMGPROXY_SALT`,
    /// `IMGPROXY_SIGNATURE_SIZE`, `IMGPROXY_PRESETS`), so an existing environment works unchanged.
    public struct Imgproxy: Sendable, Codable, Hashable {
        /// The path the URLs live under (`/`, `/img`); `nil`: imgproxy URLs are off.
        public var prefix: String? = nil
        /// The HMAC keys, hex-encoded, paired in order with ``salts``. Empty: any signature segment is
        /// accepted, as imgproxy does without a key.
        public var keys: [String] = []
        /// The salts, hex-encoded, one per key.
        public var salts: [String] = []
        /// How many bytes of the HMAC-SHA256 digest a signature carries, 1…32.
        public var signatureSize: Int = 32
        /// Whether an answer without a format follows `Accept` (AVIF, else WebP), as imgproxy's
        /// `IMGPROXY_AUTO_AVIF` and `IMGPROXY_AUTO_WEBP` do; off: the source's format.
        public var autoFormat: Bool = false
        /// imgproxy presets, `NAME=OPTION/OPTION…` (`IMGPROXY_PRESETS`' syntax).
        public var presets: [String] = []
        /// The configured watermark (``ServerConfiguration/watermarks``) that imgproxy's `watermark` option
        /// draws; `nil`: the only one configured, if there is exactly one.
        public var watermark: String? = nil

        /// imgproxy URLs off.
        public init() {}

        /// Decodes the `imgproxy` object of a config file through the settings' declaration.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("imgproxy", of: decoder, \.imgproxy)
        }
    }

    /// thumbor's URLs (`PREFIX/{hmac|unsafe}/…/IMAGE`), off unless ``prefix`` is set.
    public struct Thumbor: Sendable, Codable, Hashable {
        /// The path the URLs live under (`/`, `/thumbor`); `nil`: thumbor URLs are off.
        public var prefix: String? = nil
        /// thumbor's `SECURITY_KEY`: URLs are signed with HMAC-SHA1 under it. `nil`: only `unsafe/` URLs.
        public var key: String? = nil
        /// Whether `unsafe/` URLs are accepted although a key is set (thumbor's `ALLOW_UNSAFE_URL`).
        public var allowUnsafe: Bool = false

        /// thumbor URLs off.
        public init() {}

        /// Decodes the `thumbor` object of a config file through the settings' declaration.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("thumbor", of: decoder, \.thumbor)
        }
    }

    /// `prefix` as the routes use it: with one `/` at each end (`img` and `/img/` are `/img/`, `/` stays `/`).
    static func normalisedPrefix(_ prefix: String) -> String {
        let inner = prefix.split(separator: "/").joined(separator: "/")
        return inner.isEmpty ? "/" : "/" + inner + "/"
    }

    /// Checks the dialects' settings: prefixes that do not hide Tessera's own routes or each other, keys
    /// and salts that are hex and paired, a signature size of 1…32.
    func validateDialects() throws(ServerConfigurationError) {
        let own = ["v1", "healthz", "metrics", "gallery", "admin"]
        var prefixes: [String] = []
        for (flag, prefix) in [("--imgproxy-prefix", imgproxy.prefix), ("--thumbor-prefix", thumbor.prefix)] {
            guard let prefix else { continue }
            let first = prefix.split(separator: "/").first.map(String.init)
            if let first, own.contains(first) {
                throw ServerConfigurationError("\(flag) '\(prefix)' would hide Tessera's own /\(first) routes")
            }
            prefixes.append(prefix)
        }
        if prefixes.count == 2, prefixes[0] == prefixes[1] {   // nested ones are fine: the longer prefix routes first
            throw ServerConfigurationError("--imgproxy-prefix and --thumbor-prefix are both '\(prefixes[0])'")
        }
        guard imgproxy.keys.count == imgproxy.salts.count else {
            throw ServerConfigurationError("imgproxy has \(imgproxy.keys.count) keys and \(imgproxy.salts.count) salts; they are paired in order")
        }
        for hex in imgproxy.keys + imgproxy.salts where Self.hexBytes(hex) == nil {
            throw ServerConfigurationError("an imgproxy key or salt is not hex")
        }
        guard (1...32).contains(imgproxy.signatureSize) else {
            throw ServerConfigurationError("--imgproxy-signature-size must be 1…32 bytes")
        }
        if thumbor.key == "" { throw ServerConfigurationError("--thumbor-key is empty") }
    }

    /// The bytes of hex text (even length, digits and a–f in either case), or `nil`.
    static func hexBytes(_ text: String) -> [UInt8]? {
        let digits = Array(text)
        guard digits.count % 2 == 0, digits.allSatisfy(\.isHexDigit) else { return nil }
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
    }
}
#endif
