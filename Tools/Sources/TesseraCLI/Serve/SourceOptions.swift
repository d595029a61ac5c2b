import ArgumentParser
import Foundation
import TesseraServer

/// `tessera serve`'s flags for named sources (S3 buckets, private HTTP origins, more directories) and the
/// S3 settings they share; each has a `TESSERA_…` variable, and flags win over the config file.
struct SourceOptions: ParsableArguments {
    @Option(name: .customLong("source"),
            help: "A named source NAME=URL: file:///DIR, s3://BUCKET[/PREFIX] or http(s)://HOST[/BASE/], asked for as /v1/PRESET/@NAME/KEY; repeatable (TESSERA_SOURCES, comma-separated).")
    var sources: [String] = []
    @Option(name: .customLong("s3-endpoint"), help: "The S3 endpoint, e.g. http://127.0.0.1:9000 (TESSERA_S3_ENDPOINT; default AWS's for the region).")
    var s3Endpoint: String?
    @Option(name: .customLong("s3-region"), help: "The S3 signing region (TESSERA_S3_REGION; default us-east-1).")
    var s3Region: String?
    @Flag(name: .customLong("s3-path-style"), help: "Path-style S3 addressing, ENDPOINT/BUCKET/KEY (TESSERA_S3_PATH_STYLE=1; the default with --s3-endpoint).")
    var s3PathStyle = false
    @Option(name: .customLong("allow-bucket"), help: "A bucket /v1/resize?src=s3://BUCKET/KEY may read; repeatable (TESSERA_ALLOW_BUCKETS).")
    var allowedBuckets: [String] = []
    @Option(name: .customLong("source-header"), help: "A header NAME:HEADER:VALUE sent with every request of the http(s) source NAME (an error for s3:// and file:// sources); repeatable.")
    var sourceHeaders: [String] = []

    /// Applies the flags (else the variables of `environment`) to `configuration`.
    func apply(to configuration: inout ServerConfiguration, environment: [String: String]) throws {
        func list(_ name: String) -> [String] {
            (environment[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        for text in sources.isEmpty ? list("TESSERA_SOURCES") : sources {
            do throws(ServerConfigurationError) {
                let (name, source) = try ServerConfiguration.Source.parse(text)
                configuration.sources[name] = source
            } catch {
                throw ValidationError(error.description)
            }
        }
        if let value = s3Endpoint ?? environment["TESSERA_S3_ENDPOINT"] { configuration.s3.endpoint = value }
        if let value = s3Region ?? environment["TESSERA_S3_REGION"] { configuration.s3.region = value }
        if s3PathStyle || environment["TESSERA_S3_PATH_STYLE"] == "1" { configuration.s3.pathStyle = true }
        let buckets = allowedBuckets.isEmpty ? list("TESSERA_ALLOW_BUCKETS") : allowedBuckets
        if !buckets.isEmpty { configuration.s3.allowedBuckets = buckets }
        for text in sourceHeaders {
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ValidationError("source header '\(text)' is not NAME:HEADER:VALUE")
            }
            guard configuration.sources[parts[0]] != nil else { throw ValidationError("--source-header names no source '\(parts[0])'") }
            configuration.sources[parts[0]]?.headers[parts[1]] = parts[2].trimmingCharacters(in: .whitespaces)
        }
    }
}
