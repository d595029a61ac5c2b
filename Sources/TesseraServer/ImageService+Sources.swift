#if Serving
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging
import Tessera
import TesseraHTTP

/// A configured source at run time (``ServerConfiguration/Source``).
enum NamedSource: Sendable {
    /// `file:///DIR`: checked and versioned like the root.
    case directory(RootDirectory)
    /// `s3://…` or `http(s)://…`.
    case objects(any ObjectStore)
}

extension ImageService {
    /// Everything the stores need from the service being made.
    struct StoreContext {
        let configuration: ServerConfiguration
        let tables: URL
        let decoder: ImageDecoder
        let observability: Observability
        let metrics: any MetricsFactory
        let environment: [String: String]
    }

    /// The named sources of `context.configuration`, by name.
    static func makeSources(_ context: StoreContext) throws -> [String: NamedSource] {
        var made: [String: NamedSource] = [:]
        let configuration = context.configuration
        for (name, source) in configuration.sources {
            switch try source.kind() {
            case .directory(let path):
                made[name] = .directory(try RootDirectory(path, recheckSeconds: configuration.sourceCheckIntervalSeconds))
            case .bucket(let bucket, let prefix):
                made[name] = .objects(try bucketStore(name: name, bucket: bucket, prefix: prefix,
                                                      endpoint: try s3Endpoint(for: source, name: name, context), context))
            case .origin(let base):
                made[name] = .objects(try originStore(name: name, base: base, headers: source.headers, context))
            }
        }
        return made
    }

    /// A store for each bucket clients may name in `src=s3://BUCKET/KEY` (``ServerConfiguration/S3/allowedBuckets``).
    static func makeBuckets(_ context: StoreContext) throws -> [String: any ObjectStore] {
        var made: [String: any ObjectStore] = [:]
        for bucket in context.configuration.s3.allowedBuckets {
            let endpoint = try s3Endpoint(for: ServerConfiguration.Source(url: "s3://" + bucket), name: "s3:" + bucket, context)
            made[bucket] = try bucketStore(name: "s3:" + bucket, bucket: bucket, prefix: "", endpoint: endpoint, context)
        }
        return made
    }

    /// A bucket's retries: a `5xx` or a broken connection is sent again twice, after 0.1 s and 0.2 s (AWS's
    /// own clients retry too); a timeout is not, the download timeout already bounds the wait.
    static let bucketRetry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(100), maximumDelay: .seconds(2))

    /// The objects of `bucket` under `prefix`, versioned by their ETags, signed for `endpoint`. A copy on
    /// disk is used without asking the store for the source check interval, whatever the object's own
    /// `Cache-Control`; then it is revalidated. A `403`, or a `400` (a refused session token, a wrong region in
    /// the signature), is the operator's credentials (`502 source_denied`).
    static func bucketStore(name: String, bucket: String, prefix: String, endpoint: S3Endpoint, retry: RetryPolicy = bucketRetry,
                            _ context: StoreContext) throws -> FetchedStore {
        let limits = context.configuration.limits
        let loader = HTTPDataLoader(configuration: HTTPDataLoader.Configuration(
            maximumRedirects: 0, connectTimeout: .seconds(min(limits.downloadTimeoutSeconds, 5)), maximumConnectionsPerHost: 16))
        let settings = storeSettings(name: name, defaultMaxAge: .seconds(context.configuration.sourceCheckIntervalSeconds),
                                     retry: retry, context)
        return try FetchedStore(name: name, loader: loader, authorizer: S3RequestSigner(credentials: endpoint.credentials, region: endpoint.region),
                                configuration: settings, freshness: .service, versioning: .entityTag,
                                statuses: [400: .sourceDenied, 403: .sourceDenied, 404: .notFound], decoder: context.decoder, metrics: context.metrics) { key throws(ServiceError) in
            do throws(S3Error) { return try endpoint.url(bucket: bucket, key: prefix + key) } catch { throw ServiceError(error) }
        }
    }

    /// The objects under `base`, versioned by a digest of their bytes, each request with `headers`; the
    /// origin's own freshness rules decide how long a disk copy is used.
    static func originStore(name: String, base: URL, headers: [String: String], _ context: StoreContext) throws -> FetchedStore {
        var settings = storeSettings(name: name, defaultMaxAge: ImageManager.Configuration().defaultMaxAge, retry: .none, context)
        settings.headers = headers
        return try FetchedStore(name: name, loader: HTTPDataLoader(configuration: HTTPDataLoader.Configuration(maximumConnectionsPerHost: 16)),
                                authorizer: nil, configuration: settings, freshness: .store, versioning: .digest,
                                statuses: [404: .notFound, 410: .notFound], decoder: context.decoder, metrics: context.metrics) { key throws(ServiceError) in
            guard let encoded = key.percentEncodedPath, let url = URL(string: encoded, relativeTo: base)?.absoluteURL else {
                throw ServiceError(.badPath, "the key cannot be made into a URL under the origin")
            }
            return url
        }
    }

    /// A store's manager: its disk cache in `TABLES/sources/NAME`, the service's download timeout and
    /// size limit, no memory cache (the store's callers keep what they make from the bytes).
    private static func storeSettings(name: String, defaultMaxAge: Duration, retry: RetryPolicy,
                                      _ context: StoreContext) -> ImageManager.Configuration {
        let limits = context.configuration.limits
        let directory = context.tables.appendingPathComponent("sources").appendingPathComponent(name)
        return ImageManager.Configuration(memory: MemoryCache.Configuration(costLimit: 0), disk: DiskCache.Configuration(directory: directory),
                                          maximumConcurrentDownloads: 16, requestTimeout: .seconds(limits.downloadTimeoutSeconds),
                                          maximumResponseBytes: limits.maximumSourceBytes, retry: retry, defaultMaxAge: defaultMaxAge,
                                          observability: context.observability)
    }

    /// `environment` with each of `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` read
    /// from the file its `…_FILE` variable names, when that is set (both set, or an unreadable file: an error).
    static func readingSecretFiles(_ environment: [String: String]) throws(ServerConfigurationError) -> [String: String] {
        var environment = environment
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"] {
            guard let path = environment[name + "_FILE"] else { continue }
            guard environment[name] == nil else { throw ServerConfigurationError("\(name) and \(name)_FILE are both set: give the secret once") }
            guard let text = ServeSettingsReader.secret(atPath: path) else {
                throw ServerConfigurationError("\(name)_FILE '\(path)' names no readable file")
            }
            environment[name] = text
        }
        return environment
    }

    /// The endpoint of an S3 source: its own endpoint, region, addressing and credentials where it has
    /// them, else the shared ``ServerConfiguration/s3`` settings, and for credentials last the `AWS_…`
    /// environment variables (each of which may instead name a file with `_FILE`: `AWS_SECRET_ACCESS_KEY_FILE`).
    static func s3Endpoint(for source: ServerConfiguration.Source, name: String, _ context: StoreContext) throws -> S3Endpoint {
        let shared = context.configuration.s3
        let credentials: S3Credentials
        if let key = source.accessKeyID, let secret = source.secretAccessKey {
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: source.sessionToken)
        } else if let key = shared.accessKeyID, let secret = shared.secretAccessKey {
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: shared.sessionToken)
        } else if let fromEnvironment = S3Credentials(environment: try Self.readingSecretFiles(context.environment)) {
            credentials = fromEnvironment
        } else {
            throw ServerConfigurationError("source '\(name)' has no credentials: set accessKeyID and secretAccessKey, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        var endpoint: URL?
        if let text = source.endpoint ?? shared.endpoint {
            guard let url = URL(string: text), url.host != nil else {
                throw ServerConfigurationError("source '\(name)': endpoint \(text) is not an http(s) URL")
            }
            endpoint = url
        }
        let addressing = (source.pathStyle ?? shared.pathStyle).map { $0 ? S3Endpoint.Addressing.path : .virtualHost }
        return S3Endpoint(credentials: credentials, region: source.region ?? shared.region, endpoint: endpoint, addressing: addressing)
    }
}
#endif
