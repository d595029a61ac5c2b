#if Serving
import Logging
import Tessera

extension ServeSettings {
    /// The key of the config file's own setting (`--config`, `TESSERA_CONFIG`), read before the file.
    static let configKey = "config"

    /// Every `tessera serve` setting, declared once, in the order they are applied (a fallback's image
    /// before its status, the sources before their headers). Adding a setting is adding a line here and
    /// using its value; the flags, the variables, the config file and docs/SERVING.md follow from it.
    public static let declarations: [ServeSetting] = [
        .value(configKey, file: false, flag: "config", environment: "TESSERA_CONFIG", default: "none",
               "A JSON config file: the lowest of the three sources", as: String.self) { $1.configFile = $0 },
        .value("root", flag: "root", environment: "TESSERA_ROOT", default: "(required)",
               "The directory of images served under /v1/", as: String.self) { $1.server.root = $0 },
        .value("listen", flag: "listen", environment: "TESSERA_LISTEN", default: "`127.0.0.1:8080`",
               "Where to listen", as: ListenAddress.self) { $1.server.listen = $0.text },
        .value("metricsListen", flag: "metrics-listen", environment: "TESSERA_METRICS_LISTEN", default: "none (`/metrics` on `listen`)",
               "A listener of its own for GET /metrics", as: ListenAddress.self) { $1.server.metricsListen = $0.text },
        .list("presets", flag: "preset", environment: "TESSERA_PRESETS", default: "`thumb:200x200:fill`, `lowres:40x40:fill`",
              "The presets; the file takes full recipes `[{name,width,height,mode,gravity,enlarge,background,dpr,blur,format,quality}]`",
              of: ServerConfiguration.Preset.self) { $1.server.presets = $0 },
        .list("watermarks", flag: "watermark", environment: "TESSERA_WATERMARKS", default: "none",
              "Images drawn over answers that ask for them by name (`watermark=NAME`), loaded at start-up; the file takes `[{name,file}]`",
              of: ServerConfiguration.Watermark.self) { $1.server.watermarks = $0 },
        .value("tablesDirectory", flag: "tables", environment: "TESSERA_TABLES",
               default: "`$XDG_CACHE_HOME/tessera/serve/ROOTNAME-HASH`, else `~/.cache/tessera/serve/…` (never inside the root)",
               "Where the image tables live, one directory per root", as: String.self) { $1.server.tablesDirectory = $0 },
        .value("tableCapacity", flag: "table-capacity", environment: "TESSERA_TABLE_CAPACITY", default: "10000",
               "Entries per preset table", as: Int.self) { $1.server.tableCapacity = $0 },
        .list("signingKeys", flag: "signing-key", environment: "TESSERA_SIGNING_KEYS", secret: true, default: "none (unsigned URLs)",
              "HMAC keys for signed URLs; the file takes `[{id,secret}]`", of: ServerConfiguration.SigningKey.self) { $1.server.signingKeys = $0 },
        .value("adminKey", flag: "admin-key", environment: "TESSERA_ADMIN_KEY", secret: true, default: "none (no admin routes: 404)",
               "The bearer key of `POST /admin/purge?src=SOURCE` (`Authorization: Bearer KEY`)", as: String.self) {
            $1.server.adminKey = $0
        },
        .list("remote.allowedHosts", flag: "allow-host", environment: "TESSERA_ALLOW_HOSTS", default: "none (remote sources off)",
              "Hosts remote sources may come from (`*.example.com` for subdomains)", of: String.self) { $1.server.remote.allowedHosts = $0 },
        .list("remote.allowedAddressRanges", flag: "allow-range", environment: "TESSERA_ALLOW_RANGES", default: "none",
              "Address ranges the SSRF guard lets through", of: CIDRRange.self) { $1.server.remote.allowedAddressRanges = $0.map(\.text) },
        .value("remote.diskCacheDirectory", flag: "remote-cache", environment: "TESSERA_REMOTE_CACHE", default: "`<tables>/remote`",
               "Where downloaded originals are kept", as: String.self) { $1.server.remote.diskCacheDirectory = $0 },
        .value("limits.maximumSourceBytes", flag: "max-source-bytes", environment: "TESSERA_MAX_SOURCE_BYTES", default: "33554432",
               "Largest source, in bytes (413 above)", as: Int.self) { $1.server.limits.maximumSourceBytes = $0 },
        .value("limits.maximumSourcePixels", flag: "max-source-pixels", environment: "TESSERA_MAX_SOURCE_PIXELS", default: "50000000",
               "Largest source, in pixels (413 above)", as: Int.self) { $1.server.limits.maximumSourcePixels = $0 },
        .value("limits.maximumOutputPixels", flag: "max-output-pixels", environment: "TESSERA_MAX_OUTPUT_PIXELS", default: "4000000",
               "Largest output, in pixels (400 above)", as: Int.self) { $1.server.limits.maximumOutputPixels = $0 },
        .value("limits.maximumAnimationPixels", flag: "max-animation-pixels", environment: "TESSERA_MAX_ANIMATION_PIXELS", default: "25000000",
               "Largest animation kept animated, in pixels over all frames (its first frame above)", as: Int.self) {
            $1.server.limits.maximumAnimationPixels = $0
        },
        .value("limits.maximumAnimationFrames", flag: "max-animation-frames", environment: "TESSERA_MAX_ANIMATION_FRAMES", default: "256",
               "Most frames of an animation kept animated (its first frame above)", as: Int.self) {
            $1.server.limits.maximumAnimationFrames = $0
        },
        .value("limits.requestTimeoutSeconds", flag: "request-timeout", environment: "TESSERA_REQUEST_TIMEOUT", default: "30",
               "Longest a request may take before it is answered 504", as: SettingDuration.self) {
            $1.server.limits.requestTimeoutSeconds = $0.seconds
        },
        .value("limits.downloadTimeoutSeconds", flag: "download-timeout", environment: "TESSERA_DOWNLOAD_TIMEOUT", default: "10",
               "Longest the download of a remote source may take", as: SettingDuration.self) {
            $1.server.limits.downloadTimeoutSeconds = $0.seconds
        },
        .value("limits.maximumConcurrentDecodes", flag: "max-decodes", environment: "TESSERA_MAX_DECODES", default: "4",
               "Decodes at once", as: Int.self) { $1.server.limits.maximumConcurrentDecodes = $0 },
        .value("limits.maximumQueuedDecodes", flag: "max-queued-decodes", environment: "TESSERA_MAX_QUEUED_DECODES", default: "64",
               "Requests waiting for a decode before 503", as: Int.self) { $1.server.limits.maximumQueuedDecodes = $0 },
        .value("limits.allowedWidths", flag: "allowed-widths", environment: "TESSERA_ALLOWED_WIDTHS", default: "any",
               "Widths /v1/resize accepts", as: PositiveSizes.self) { $1.server.limits.allowedWidths = $0.values },
        .value("limits.allowedHeights", flag: "allowed-heights", environment: "TESSERA_ALLOWED_HEIGHTS", default: "any",
               "Heights /v1/resize accepts", as: PositiveSizes.self) { $1.server.limits.allowedHeights = $0.values },
        .value("connections.idleTimeoutSeconds", flag: "idle-timeout", environment: "TESSERA_IDLE_TIMEOUT", default: "60",
               "Longest a keep-alive connection may send nothing", as: SettingDuration.self) {
            $1.server.connections.idleTimeoutSeconds = $0.seconds
        },
        .value("connections.headerTimeoutSeconds", flag: "header-timeout", environment: "TESSERA_HEADER_TIMEOUT", default: "10",
               "Longest a request's headers may take to arrive", as: SettingDuration.self) {
            $1.server.connections.headerTimeoutSeconds = $0.seconds
        },
        .value("connections.maximumConnections", flag: "max-connections", environment: "TESSERA_MAX_CONNECTIONS",
               default: "none (the descriptor limit)", "Connections open at once; more are closed when accepted", as: Int.self) {
            $1.server.connections.maximumConnections = $0
        },
        .value("responseCacheBytes", flag: "response-cache-bytes", environment: "TESSERA_RESPONSE_CACHE_BYTES", default: "67108864",
               "Memory for encoded responses", as: Int.self) { $1.server.responseCacheBytes = $0 },
        .value("maxAgeSeconds", flag: "max-age", environment: "TESSERA_MAX_AGE", default: "86400",
               "`Cache-Control` max-age of image responses", as: WholeSeconds.self) { $1.server.maxAgeSeconds = $0.seconds },
        .value("decoding", flag: "decoding", environment: "TESSERA_DECODING", default: "`lenient` (damaged sources answered, marked `X-Tessera-Decode`)",
               "How damaged and truncated sources are decoded (`strict`: 415 undecodable_source)", as: DecodingPolicy.self) {
            $1.server.decoding = $0
        },
        .value("partialMaxAgeSeconds", flag: "partial-max-age", environment: "TESSERA_PARTIAL_MAX_AGE", default: "60 (at most `maxAgeSeconds`)",
               "`Cache-Control` max-age of an answer made from a truncated source", as: WholeSeconds.self) {
            $1.server.partialMaxAgeSeconds = $0.seconds
        },
        .value("sourceCheckIntervalSeconds", flag: "source-check-interval", environment: "TESSERA_SOURCE_CHECK_INTERVAL",
               default: "1 (0: every request `stat`s its source)", "How long a source's check answers for it on memory hits",
               as: SettingDuration.self) { $1.server.sourceCheckIntervalSeconds = $0.seconds },
        .value("defaultQuality", flag: nil, environment: nil, default: "none",
               "Older: the quality of JPEG and WebP (`quality` overrides it)", as: Int.self) {
            $1.server.quality.jpeg = $0
            $1.server.quality.webp = $0
        },
        .value("quality.jpeg", flag: "quality-jpeg", environment: "TESSERA_QUALITY_JPEG", default: "82",
               "JPEG quality when a request has no `q`, 1…100", as: Int.self) { $1.server.quality.jpeg = $0 },
        .value("quality.webp", flag: "quality-webp", environment: "TESSERA_QUALITY_WEBP", default: "80",
               "WebP quality when a request has no `q`, 1…100", as: Int.self) { $1.server.quality.webp = $0 },
        .value("quality.avif", flag: "quality-avif", environment: "TESSERA_QUALITY_AVIF", default: "60",
               "AVIF quality when a request has no `q`, 1…100", as: Int.self) { $1.server.quality.avif = $0 },
        .value("avifSpeed", flag: "avif-speed", environment: "TESSERA_AVIF_SPEED", default: "9",
               "libaom's speed for AVIF answers, 0 (slowest, smallest) … 9", as: Int.self) { $1.server.avifSpeed = $0 },
        .value("avifMinPixels", flag: "avif-min-pixels", environment: "TESSERA_AVIF_MIN_PIXELS", default: "90000",
               "Opaque answers `Accept` chose AVIF for with fewer pixels are WebP (0: AVIF at every size)", as: Int.self) {
            $1.server.avifMinPixels = $0
        },
        .toggle("onlyPresets", flag: "only-presets", onFlag: true, environment: "TESSERA_ONLY_PRESETS", default: "off",
                "Presets only: /v1/resize is 404, preset routes take no query option but `s`") { $1.server.onlyPresets = $0 },
        .value("fallback.image", flag: "fallback-image", environment: "TESSERA_FALLBACK_IMAGE", default: "none (JSON errors)",
               "An image served, drawn like the request, when its source is missing or undecodable", as: String.self) {
            $1.server.fallback = ServerConfiguration.Fallback(image: $0)
        },
        .value("fallback.status", flag: "fallback-status", environment: "TESSERA_FALLBACK_STATUS", default: "404",
               "The status of the fallback image", as: Int.self) { (status, settings) throws(SettingValueFailure) in
            guard settings.server.fallback != nil else { throw SettingValueFailure("needs a fallback image (--fallback-image)") }
            settings.server.fallback?.status = status
        },
        .value("fallback.maxAgeSeconds", flag: "fallback-max-age", environment: "TESSERA_FALLBACK_MAX_AGE", default: "60",
               "`Cache-Control` max-age of the fallback image", as: WholeSeconds.self) { (age, settings) throws(SettingValueFailure) in
            guard settings.server.fallback != nil else { throw SettingValueFailure("needs a fallback image (--fallback-image)") }
            settings.server.fallback?.maxAgeSeconds = age.seconds
        },
        .list("sources", flag: "source", environment: "TESSERA_SOURCES", mergesWithFile: true, default: "none",
              "Named sources `NAME=URL` (`file:///DIR`, `s3://BUCKET[/PREFIX]`, `http(s)://HOST[/BASE/]`); the file takes `{NAME: {url, endpoint, region, pathStyle, accessKeyID, secretAccessKey, sessionToken (each also as a file: accessKeyIDFile…), headers}}`, and flags or variables add to it",
              of: SourceSetting.self) { (sources, settings) in
            for named in sources { settings.server.sources[named.name] = named.source }
        },
        .list("sourceHeaders", file: false, flag: "source-header", environment: nil, default: "none",
              "A header every request of an http(s) source carries", of: SourceHeader.self) { (headers, settings) throws(SettingValueFailure) in
            for header in headers {
                guard settings.server.sources[header.source] != nil else { throw SettingValueFailure("names no source '\(header.source)'") }
                settings.server.sources[header.source]?.headers[header.field] = header.value
            }
        },
        .value("s3.endpoint", flag: "s3-endpoint", environment: "TESSERA_S3_ENDPOINT", default: "AWS's for the region",
               "The S3 endpoint (`http://127.0.0.1:9000`)", as: String.self) { $1.server.s3.endpoint = $0 },
        .value("s3.region", flag: "s3-region", environment: "TESSERA_S3_REGION", default: "`us-east-1`",
               "The S3 signing region", as: String.self) { $1.server.s3.region = $0 },
        .toggle("s3.pathStyle", flag: "s3-path-style", onFlag: true, environment: "TESSERA_S3_PATH_STYLE",
                default: "path style with an endpoint, virtual-hosted on AWS", "Path-style S3 addressing, ENDPOINT/BUCKET/KEY") {
            $1.server.s3.pathStyle = $0
        },
        .list("s3.allowedBuckets", flag: "allow-bucket", environment: "TESSERA_ALLOW_BUCKETS", default: "none",
              "Buckets `/v1/resize?src=s3://BUCKET/KEY` may read", of: String.self) { $1.server.s3.allowedBuckets = $0 },
        .value("s3.accessKeyID", flag: nil, environment: "TESSERA_S3_ACCESS_KEY_ID", secret: true, default: "`AWS_ACCESS_KEY_ID`",
               "The access key id of S3 sources without their own", as: String.self) { $1.server.s3.accessKeyID = $0 },
        .value("s3.secretAccessKey", flag: nil, environment: "TESSERA_S3_SECRET_ACCESS_KEY", secret: true, default: "`AWS_SECRET_ACCESS_KEY`",
               "Its secret access key", as: String.self) { $1.server.s3.secretAccessKey = $0 },
        .value("s3.sessionToken", flag: nil, environment: "TESSERA_S3_SESSION_TOKEN", secret: true, default: "`AWS_SESSION_TOKEN`",
               "Its session token (temporary credentials)", as: String.self) { $1.server.s3.sessionToken = $0 },
        .toggle("gallery.enabled", flag: "no-gallery", onFlag: false, environment: "TESSERA_GALLERY", default: "on",
                "The /gallery page (never with signing keys)") { $1.server.gallery.enabled = $0 },
        .value("gallery.maximumImages", flag: "gallery-max-images", environment: "TESSERA_GALLERY_MAX_IMAGES", default: "20000",
               "Most images one gallery listing returns", as: Int.self) { $1.server.gallery.maximumImages = $0 },
        .value("gallery.thumbHashSeconds", flag: "gallery-thumbhash-seconds", environment: "TESSERA_GALLERY_THUMBHASH_SECONDS", default: "2",
               "Longest a gallery listing spends making the ThumbHashes its images lack", as: SettingDuration.self) {
            $1.server.gallery.thumbHashSeconds = $0.seconds
        },
        .value("imgproxy.prefix", flag: "imgproxy-prefix", environment: "TESSERA_IMGPROXY_PREFIX", default: "none (imgproxy URLs off)",
               "Where imgproxy's URLs are served (`/`, `/img`), with `/health` under it", as: String.self) {
            $1.server.imgproxy.prefix = ServerConfiguration.normalisedPrefix($0)
        },
        .list("imgproxy.keys", flag: "imgproxy-key", environment: "IMGPROXY_KEY", secret: true, default: "none (any signature accepted)",
              "imgproxy's signing keys, hex, paired in order with the salts", of: String.self) { $1.server.imgproxy.keys = $0 },
        .list("imgproxy.salts", flag: "imgproxy-salt", environment: "IMGPROXY_SALT", secret: true, default: "none",
              "imgproxy's salts, hex, one per key", of: String.self) { $1.server.imgproxy.salts = $0 },
        .value("imgproxy.signatureSize", flag: "imgproxy-signature-size", environment: "IMGPROXY_SIGNATURE_SIZE", default: "32",
               "Bytes of the HMAC-SHA256 an imgproxy signature carries, 1…32", as: Int.self) { $1.server.imgproxy.signatureSize = $0 },
        .toggle("imgproxy.autoFormat", flag: "imgproxy-auto-format", onFlag: true, environment: "TESSERA_IMGPROXY_AUTO_FORMAT",
                default: "off (the source's format)", "imgproxy URLs without a format follow `Accept` (AVIF, else WebP), as `IMGPROXY_AUTO_AVIF`/`AUTO_WEBP`") {
            $1.server.imgproxy.autoFormat = $0
        },
        .list("imgproxy.presets", flag: "imgproxy-preset", environment: "IMGPROXY_PRESETS", default: "none",
              "imgproxy presets `NAME=OPTION/OPTION…`; `preset:NAME` also finds Tessera's presets", of: String.self) {
            $1.server.imgproxy.presets = $0
        },
        .value("imgproxy.watermark", flag: "imgproxy-watermark", environment: "TESSERA_IMGPROXY_WATERMARK",
               default: "the only configured watermark", "The watermark imgproxy's `watermark` option draws", as: String.self) {
            $1.server.imgproxy.watermark = $0
        },
        .value("thumbor.prefix", flag: "thumbor-prefix", environment: "TESSERA_THUMBOR_PREFIX", default: "none (thumbor URLs off)",
               "Where thumbor's URLs are served (`/`, `/thumbor`), with `/healthcheck` under it", as: String.self) {
            $1.server.thumbor.prefix = ServerConfiguration.normalisedPrefix($0)
        },
        .value("thumbor.key", flag: "thumbor-key", environment: "TESSERA_THUMBOR_KEY", secret: true, default: "none (`unsafe/` URLs only)",
               "thumbor's `SECURITY_KEY`, which signs its URLs (HMAC-SHA1)", as: String.self) { $1.server.thumbor.key = $0 },
        .toggle("thumbor.allowUnsafe", flag: "thumbor-allow-unsafe", onFlag: true, environment: "TESSERA_THUMBOR_ALLOW_UNSAFE",
                default: "off (on when no key is set)", "Accept `unsafe/` thumbor URLs although a key is set (`ALLOW_UNSAFE_URL`)") {
            $1.server.thumbor.allowUnsafe = $0
        },
        .value("galleryReport", file: false, flag: "gallery-report", environment: "TESSERA_GALLERY_REPORT", default: "none (no test mode)",
               "Accept POST /gallery/report (the page's test mode) and write it to this file", as: String.self) { $1.galleryReport = $0 },
        .value("logLevel", file: false, flag: "log-level", environment: "TESSERA_LOG_LEVEL",
               default: "`info` (one line per request; `warning` turns those off)", "Least level logged", as: Logger.Level.self) {
            $1.logLevel = $0
        },
        .value("logFormat", file: false, flag: "log-format", environment: "TESSERA_LOG_FORMAT",
               default: "`text` (swift-log's lines); `json`: one object per line", "How log lines are written on standard error",
               as: LogFormat.self) { $1.logFormat = $0 },
    ]
}
#endif
