#if Serving
import Foundation
import Tessera

/// Everything `tessera serve` (and a mounted ``ImageService``) is configured with. Decodable from the
/// JSON config file; flags and `TESSERA_…` variables override its fields (docs/SERVING.md). Each field
/// is declared once, with its flag, variable and key, in ``ServeSettings/declarations``.
public struct ServerConfiguration: Sendable, Codable, Hashable {
    /// A named recipe backed by one image table: a size and every option of `ImageProcessing` (mode,
    /// gravity, enlarge, background, DPR, blur, output format and quality).
    ///
    /// In the JSON config a preset is its name beside the recipe's fields, each optional but a size:
    /// `{"name": "card", "width": 320, "height": 200, "mode": "fill", "gravity": "smart", "format": "webp", "quality": 70}`.
    /// `--preset NAME:WxH:MODE` gives the size and mode only (`NAME:Wx:MODE` and `NAME:xH:MODE` one side).
    public struct Preset: Sendable, Codable, Hashable {
        /// The name in `/v1/{preset}/…`.
        public var name: String
        /// What the preset makes of each source. Its `ImageProcessing.format` and
        /// `ImageProcessing.quality` fix the encoding (a request's `fmt` and `q` still override them
        /// unless ``ServerConfiguration/onlyPresets`` is on); the other fields shape the table's pixels.
        public var processing: ImageProcessing

        /// A preset `name` of `processing`.
        public init(name: String, processing: ImageProcessing) {
            self.name = name
            self.processing = processing
        }

        /// A preset `name` of `width`×`height` pixels, sized by `mode` (and otherwise the defaults of
        /// `ImageProcessing`: centred, never enlarged).
        public init(name: String, width: Int, height: Int, mode: ImageProcessing.Mode) {
            self.init(name: name, processing: ImageProcessing(width: width, height: height, mode: mode))
        }

        /// Parses `NAME:WxH:MODE` (the `--preset` syntax); one side may be left out (`300x`, `x200`).
        /// MODE is one of `ImageProcessing.Mode`'s names.
        public init(parsing text: String) throws(ServerConfigurationError) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let modes = ImageProcessing.Mode.allCases.map(\.rawValue).joined(separator: ", ")
            guard parts.count == 3 else { throw ServerConfigurationError("preset '\(text)' is not NAME:WxH:MODE") }
            let sides = parts[1].lowercased().split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
            guard sides.count == 2, sides.allSatisfy({ $0.isEmpty || Int($0) != nil }), !sides.allSatisfy(\.isEmpty),
                  let mode = ImageProcessing.Mode(rawValue: parts[2]) else {
                throw ServerConfigurationError("preset '\(text)' is not NAME:WxH:MODE (MODE is one of \(modes))")
            }
            self.init(name: parts[0], processing: ImageProcessing(width: Int(sides[0]), height: Int(sides[1]), mode: mode))
        }

        private enum CodingKeys: String, CodingKey { case name }

        /// Decodes `{"name": …}` beside the recipe's fields (`ImageProcessing`'s JSON).
        public init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
            processing = try ImageProcessing(from: decoder)
        }

        /// Encodes the name beside the recipe's fields.
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try processing.encode(to: encoder)
        }
    }

    /// One HMAC-SHA256 key for signed URLs.
    public struct SigningKey: Sendable, Codable, Hashable {
        /// A name for logs.
        public var id: String
        /// The secret, as given (its UTF-8 bytes are the key).
        public var secret: String

        /// A key named `id` (for logs) with the shared `secret`.
        public init(id: String, secret: String) {
            self.id = id
            self.secret = secret
        }
    }

    /// What a request may cost.
    public struct Limits: Sendable, Codable, Hashable {
        /// Largest source file or download, in bytes (413 above it).
        public var maximumSourceBytes: Int = 32 << 20
        /// Largest source image, in pixels (413 above it), checked on the header before decoding.
        public var maximumSourcePixels: Int = 50_000_000
        /// Largest output image, in pixels (400 above it).
        public var maximumOutputPixels: Int = 4_000_000
        /// Largest animation kept animated, in pixels over all frames (frames × width × height, the source's
        /// and the output's): 25 megapixels, 100 MB of decoded frames. A source over it is answered with its
        /// first frame (`X-Tessera-Animation: first frame: over the limit`), not an error.
        public var maximumAnimationPixels: Int = 25_000_000
        /// Most frames an animation kept animated may have; more are answered with the first frame, as above.
        public var maximumAnimationFrames: Int = 256
        /// Longest time a request may take: at this deadline it is answered `504 timeout`, whatever it
        /// still waits for (the work itself goes on for other requests of the same image).
        public var requestTimeoutSeconds: Double = 30
        /// Longest time the download of a remote source may take (`504 upstream_timeout` after it).
        public var downloadTimeoutSeconds: Double = 10
        /// Decodes running at once; more wait in a queue.
        public var maximumConcurrentDecodes: Int = 4
        /// Requests that may wait for a decode slot; past this a request gets 503 at once.
        public var maximumQueuedDecodes: Int = 64
        /// Widths `/v1/resize` accepts; empty: any width up to the output-pixel limit.
        public var allowedWidths: [Int] = []
        /// Heights `/v1/resize` accepts; empty: any height up to the output-pixel limit.
        public var allowedHeights: [Int] = []

        /// The defaults: 32 MB and 50 megapixels per source, 4 megapixels per output, 30 s per request, 10 s
        /// per download, 4 decodes at once with 64 waiting, any width and height.
        public init() {}

        /// Decodes the `limits` object of a config file through the settings' declaration; absent fields keep their defaults.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("limits", of: decoder, \.limits)
        }
    }

    /// What a connection may cost: how long it may stay silent, how long its headers may take, how many
    /// may be open at once.
    public struct Connections: Sendable, Codable, Hashable {
        /// A keep-alive connection that sends nothing for this long is closed (`--idle-timeout`).
        public var idleTimeoutSeconds: Double = 60
        /// A request's headers must have arrived this long after its first byte, else the connection
        /// is closed (`--header-timeout`).
        public var headerTimeoutSeconds: Double = 10
        /// Connections open at once; one more is closed as soon as it is accepted (`--max-connections`).
        /// `nil`: no limit but the process's descriptor limit.
        public var maximumConnections: Int? = nil

        /// 60 s idle, 10 s for headers, no connection limit.
        public init() {}

        /// Decodes the `connections` object of a config file through the settings' declaration; absent fields keep their defaults.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("connections", of: decoder, \.connections)
        }
    }

    /// Remote (`src=http(s)://…`) sources: off unless ``allowedHosts`` is not empty.
    public struct Remote: Sendable, Codable, Hashable {
        /// Host names accepted in `src` and after every redirect (exact, case-insensitive; `*.example.com`
        /// matches subdomains). Empty: remote sources are refused.
        public var allowedHosts: [String] = []
        /// Address ranges (CIDR, such as `127.0.0.0/8`) that the SSRF guard lets through although they are
        /// loopback, private, link-local… Empty by default.
        public var allowedAddressRanges: [String] = []
        /// Where downloaded originals are kept (the `ImageManager` disk cache); `nil`: `<tables>/remote`.
        public var diskCacheDirectory: String? = nil

        /// Remote sources off: no allowed host, no allowed range, the disk cache in `<tables>/remote`.
        public init() {}

        /// Decodes the `remote` object of a config file through the settings' declaration; absent fields keep their defaults.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("remote", of: decoder, \.remote)
        }
    }

    /// The directory served by `/v1/…` (required).
    public var root: String
    /// `HOST:PORT` to listen on.
    public var listen: String = "127.0.0.1:8080"
    /// `HOST:PORT` of a listener of its own for `GET /metrics` (`--metrics-listen`); `nil`: `/metrics` is
    /// served on ``listen`` with the images.
    public var metricsListen: String? = nil
    /// The presets: by default `thumb` (200×200, `fill`) and `lowres` (40×40, `fill`, what the gallery
    /// shows while the grid scrolls fast; docs/SERVING.md, "Gallery").
    public var presets: [Preset] = [Preset(name: "thumb", width: 200, height: 200, mode: .fill),
                                    Preset(name: "lowres", width: 40, height: 40, mode: .fill)]
    /// Where the image tables live; `nil`: ``defaultTablesDirectory(root:environment:)``, a directory of
    /// the user's cache named after the root's real path (never under the root, which would serve it).
    public var tablesDirectory: String? = nil
    /// Entries per preset table.
    public var tableCapacity: Int = 10_000
    /// Bytes of encoded responses kept in memory.
    public var responseCacheBytes: Int = 64 << 20
    /// The quality of each lossy format when `q` is absent (``Quality``: AVIF 60, WebP 80, JPEG 82). The
    /// config file's older `defaultQuality` still sets JPEG's and WebP's.
    public var quality = Quality()
    /// libaom's speed for AVIF answers, 0…9 (slowest, smallest … fastest). Default `AVIFEncoder.defaultSpeed` (9).
    public var avifSpeed: Int = AVIFEncoder.defaultSpeed
    /// An opaque answer `Accept` chose AVIF for but of fewer pixels than this is WebP (at AVIF's quality + 15,
    /// `WebPEncoder.Effort.thumbnail`); one with transparent pixels, and `fmt=avif`, are AVIF.
    /// Default 90,000 (300×300): against speed 9, WebP of the same SSIMULACRA2 score has 5–8 % more bytes at
    /// 200×200 and is written in about a quarter of the time; the bytes grow with the size (about 6 % at 400×400
    /// and 14 % at 800×800 by another measure) (docs/PERFORMANCE.md, "WebP in AVIF's place"). 0: AVIF at every
    /// size (for a slower ``avifSpeed``, whose files are smaller at every size).
    public var avifMinPixels: Int = 90_000
    /// Presets only: `/v1/resize` answers `404` and preset routes take no query option (`fmt`, `q`: `400
    /// option_not_allowed`; a signature's `s` is still read), so that an unsigned deployment cannot be made
    /// to compute arbitrary sizes or encodings. The output format still follows `Accept`.
    public var onlyPresets = false
    /// Images answers may ask to have drawn over them, by name (``Watermark``); none by default.
    public var watermarks: [Watermark] = []
    /// The image served when a source is missing or cannot be decoded (``Fallback``); `nil`: JSON errors.
    public var fallback: Fallback? = nil
    /// `Cache-Control` `max-age` of image responses, in seconds.
    public var maxAgeSeconds: Int = 86_400
    /// How sources that are damaged or end early are decoded: `DecodingPolicy/lenient` (the default) answers
    /// with what a browser would show, `DecodingPolicy/strict` refuses them (`415 undecodable_source`).
    public var decoding: DecodingPolicy = .lenient
    /// `Cache-Control` `max-age` of an answer made from a truncated source (`X-Tessera-Decode: partial`), in
    /// seconds; at most ``maxAgeSeconds``. Short, so that browsers and CDNs ask again once the file is whole.
    public var partialMaxAgeSeconds: Int = 60
    /// How long a source's check (a `stat`: its real path still inside the root, its size, modification
    /// time and inode) answers for it, in seconds. N > 0 (1 by default): a request answered from the
    /// encoded-response cache reuses a check younger than N seconds, saving a system call per hit, so a
    /// replaced source may be served old for up to N seconds; a request that reads the source always checks
    /// it (nginx's `open_file_cache_valid` makes the same trade, 60 s by default). 0: every request checks
    /// its source, so a replaced file is served new at once.
    public var sourceCheckIntervalSeconds: Double = 1
    /// When not empty, every `/v1/…` request must carry a valid `s=` signature by one of these keys.
    public var signingKeys: [SigningKey] = []
    /// The bearer key of the admin routes (`POST /admin/purge?src=SOURCE` with `Authorization: Bearer KEY`);
    /// `nil` (the default): no admin route, they answer `404`.
    public var adminKey: String? = nil
    /// What a request may cost (``Limits``).
    public var limits = Limits()
    /// Remote sources (``Remote``): off by default.
    public var remote = Remote()
    /// Named sources of originals (``Source``): `/v1/{preset}/@{name}/{key…}`. None by default.
    public var sources: [String: Source] = [:]
    /// Settings S3 sources share, and the buckets clients may name (``S3``).
    public var s3 = S3()
    /// Connection limits (``Connections``).
    public var connections = Connections()
    /// The gallery page (`/gallery`).
    public var gallery = Gallery()
    /// imgproxy's URLs (``Imgproxy``): off by default.
    public var imgproxy = Imgproxy()
    /// thumbor's URLs (``Thumbor``): off by default.
    public var thumbor = Thumbor()

    /// A configuration serving the directory `root`, with every other field at its default.
    public init(root: String) {
        self.root = root
    }

    /// Decodes a config file through the settings' declaration (``ServeSettings/declarations``): absent
    /// fields keep their defaults; a malformed value or an unknown key throws a ``ServeSettingError``.
    public init(from decoder: any Decoder) throws {
        self = try ServeSettingsReader().read(file: JSONValue(from: decoder), named: "the configuration").server
    }

    /// Whether `text` can name a preset or a watermark: letters, digits, `-` and `_`, and not empty.
    static func isName(_ text: String) -> Bool {
        !text.isEmpty && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
    }

    /// Checks the values that would make the service misbehave.
    /// - Throws: the first of ``problems()``.
    public func validate() throws(ServerConfigurationError) {
        if let first = problems().first { throw first }
    }

    /// Every value that would make the service misbehave, each named (`tessera serve --check-config` lists
    /// them all); empty for a configuration the service can start with (its files are checked when it starts).
    public func problems() -> [ServerConfigurationError] {
        var problems: [ServerConfigurationError] = []
        func check(_ condition: Bool, _ message: @autoclosure () -> String) {
            if !condition { problems.append(ServerConfigurationError(message())) }
        }
        func check(_ part: () throws(ServerConfigurationError) -> Void) {
            do throws(ServerConfigurationError) { try part() } catch { problems.append(error) }
        }
        check(!root.isEmpty, "--root is required")
        var seen = Set<String>()
        for preset in presets {
            check(Self.isName(preset.name) && preset.name != "resize",
                  "preset name '\(preset.name)' must be letters, digits, - or _, and not 'resize'")
            check(seen.insert(preset.name).inserted, "preset '\(preset.name)' is defined twice")
            let recipe = preset.processing
            guard recipe.mode != .cover, !recipe.adaptive else {
                problems.append(ServerConfigurationError(
                    "preset '\(preset.name)': cover and adaptive boxes are for thumbor's URLs, not tables (their size is the source's to decide)"))
                continue
            }
            guard recipe.width != nil || recipe.height != nil else {
                problems.append(ServerConfigurationError("preset '\(preset.name)' needs a width, a height or both"))
                continue
            }
            do throws(ImageProcessing.Invalid) {
                try recipe.validate(ImageProcessing.Limits(maximumDimension: 4096, maximumOutputPixels: limits.maximumOutputPixels))
            } catch {
                problems.append(ServerConfigurationError("preset '\(preset.name)': \(error)"))
                continue
            }
            let slot = PresetTable.slotSize(of: recipe)
            check(slot.width * slot.height <= 4 * limits.maximumOutputPixels,
                  "preset '\(preset.name)': its table slot of \(slot.width)×\(slot.height) pixels is too large")
        }
        var names = Set<String>()
        for watermark in watermarks {
            check(Self.isName(watermark.name), "watermark name '\(watermark.name)' must be letters, digits, - or _")
            check(names.insert(watermark.name).inserted, "watermark '\(watermark.name)' is defined twice")
        }
        for preset in presets {
            if let mark = preset.processing.watermark {
                check(names.contains(mark.name),
                      "preset '\(preset.name)' asks for watermark '\(mark.name)', which is not configured (--watermark \(mark.name)=FILE)")
            }
        }
        check(sourceCheckIntervalSeconds >= 0 && sourceCheckIntervalSeconds.isFinite, "the source check interval must be 0 or more seconds")
        check(limits.maximumConcurrentDecodes > 0 && limits.maximumQueuedDecodes >= 0 && limits.requestTimeoutSeconds > 0
              && limits.requestTimeoutSeconds.isFinite && limits.downloadTimeoutSeconds > 0 && limits.downloadTimeoutSeconds.isFinite,
              "limits must be positive")
        check(connections.idleTimeoutSeconds > 0 && connections.idleTimeoutSeconds.isFinite
              && connections.headerTimeoutSeconds > 0 && connections.headerTimeoutSeconds.isFinite
              && (connections.maximumConnections ?? 1) > 0,
              "the idle timeout, the header timeout and the connection limit must be positive")
        check(adminKey?.isEmpty != true, "the admin key is empty")
        check { () throws(ServerConfigurationError) in _ = try listenAddress() }
        check { () throws(ServerConfigurationError) in _ = try metricsListenAddress() }
        check(validateOutput)
        check(validateSources)
        check(validateDialects)
        check(gallery.maximumImages > 0, "gallery.maximumImages must be positive")
        for range in remote.allowedAddressRanges {
            check(AddressRange(range) != nil, "address range '\(range)' is not CIDR (such as 127.0.0.0/8)")
        }
        return problems
    }

    /// ``listen`` split into host and port.
    public func listenAddress() throws(ServerConfigurationError) -> (host: String, port: Int) {
        try Self.address(listen, flag: "--listen")
    }

    /// ``metricsListen`` split into host and port, when set.
    public func metricsListenAddress() throws(ServerConfigurationError) -> (host: String, port: Int)? {
        guard let metricsListen else { return nil }
        return try Self.address(metricsListen, flag: "--metrics-listen")
    }

    /// The tables' directory when ``tablesDirectory`` is not set: per user and kept across reboots, one per
    /// served root, so that two servers of different roots never share (and lock) the same tables.
    /// `$XDG_CACHE_HOME/tessera/serve/<name>-<hash>`, else `~/.cache/tessera/serve/<name>-<hash>`, where
    /// `<name>` is the root's last path component and `<hash>` 16 hex digits of a hash of its real path.
    public static func defaultTablesDirectory(root realRoot: String,
                                              environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let cache: String
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            cache = xdg
        } else {
            cache = (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.cache"
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a, 64 bits: stable across runs and platforms
        for byte in realRoot.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        let name = URL(fileURLWithPath: realRoot).lastPathComponent.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        let digits = String(hash, radix: 16)
        return cache + "/tessera/serve/" + (name.isEmpty ? "root" : String(name.prefix(40))) + "-"
            + String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `text` (`HOST:PORT`, `[v6]:PORT`) split into host and port; `flag` names it in the error.
    static func address(_ text: String, flag: String) throws(ServerConfigurationError) -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (0...65535).contains(port) else {
            throw ServerConfigurationError("\(flag) '\(text)' is not HOST:PORT")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "127.0.0.1" : host, port)
    }
}

/// A configuration that cannot work, with the reason.
public struct ServerConfigurationError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the field or flag and the value given.
    public let description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
#endif
