#if Serving
import Foundation
import Metrics
@_spi(Internal) import TesseraImaging
import Tessera

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
                made[name] = .objects(BucketStore(name: name, client: try s3Client(for: source, name: name, context), bucket: bucket,
                                                  prefix: prefix, maximumBytes: configuration.limits.maximumSourceBytes,
                                                  metrics: context.metrics))
            case .origin(let base):
                let cache = context.tables.appendingPathComponent("sources").appendingPathComponent(name)
                made[name] = .objects(try OriginStore(name: name, base: base, headers: source.headers, cacheDirectory: cache,
                                                      timeoutSeconds: configuration.limits.downloadTimeoutSeconds,
                                                      maximumBytes: configuration.limits.maximumSourceBytes, decoder: context.decoder,
                                                      observability: context.observability, metrics: context.metrics))
            }
        }
        return made
    }

    /// A store for each bucket clients may name in `src=s3://BUCKET/KEY` (``ServerConfiguration/S3/allowedBuckets``).
    static func makeBuckets(_ context: StoreContext) throws -> [String: BucketStore] {
        var made: [String: BucketStore] = [:]
        for bucket in context.configuration.s3.allowedBuckets {
            let client = try s3Client(for: ServerConfiguration.Source(url: "s3://" + bucket), name: "s3:" + bucket, context)
            made[bucket] = BucketStore(name: "s3:" + bucket, client: client, bucket: bucket, prefix: "",
                                       maximumBytes: context.configuration.limits.maximumSourceBytes, metrics: context.metrics)
        }
        return made
    }

    /// The client of an S3 source: its own endpoint, region, addressing and credentials where it has
    /// them, else the shared ``ServerConfiguration/s3`` settings, and for credentials last the `AWS_…`
    /// environment variables.
    static func s3Client(for source: ServerConfiguration.Source, name: String, _ context: StoreContext) throws -> S3Client {
        let shared = context.configuration.s3
        let credentials: S3Credentials
        if let key = source.accessKeyID, let secret = source.secretAccessKey {
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: source.sessionToken)
        } else if let key = shared.accessKeyID, let secret = shared.secretAccessKey {
            credentials = S3Credentials(accessKeyID: key, secretAccessKey: secret, sessionToken: shared.sessionToken)
        } else if let fromEnvironment = S3Credentials(environment: context.environment) {
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
        let settings = S3Client.Configuration(credentials: credentials, region: source.region ?? shared.region, endpoint: endpoint,
                                              addressing: addressing(source.pathStyle ?? shared.pathStyle), timeouts: context)
        return S3Client(configuration: settings)
    }

    private static func addressing(_ pathStyle: Bool?) -> S3Client.Configuration.Addressing? {
        pathStyle.map { $0 ? .path : .virtualHost }
    }
}

extension S3Client.Configuration {
    /// A configuration whose request timeout is the service's download timeout.
    init(credentials: S3Credentials, region: String, endpoint: URL?, addressing: Addressing?, timeouts context: ImageService.StoreContext) {
        let seconds = context.configuration.limits.downloadTimeoutSeconds
        self.init(credentials: credentials, region: region, endpoint: endpoint, addressing: addressing,
                  connectTimeout: .nanoseconds(Int64(min(seconds, 5) * 1e9)), readTimeout: .nanoseconds(Int64(seconds * 1e9)),
                  requestTimeout: .nanoseconds(Int64(seconds * 1e9)))
    }
}
#endif
