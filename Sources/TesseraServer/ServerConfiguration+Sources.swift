#if Serving
import Foundation

extension ServerConfiguration {
    /// A named source of originals, asked for as `/v1/{preset}/@{name}/{key…}` and
    /// `/v1/resize?src=@{name}/{key}`. Its URL says what it is:
    /// - `file:///DIR`: a directory, served as `--root` is (every path checked to stay inside it);
    /// - `s3://BUCKET[/PREFIX]`: objects of an S3-compatible bucket, `PREFIX/` before every key;
    /// - `http(s)://HOST[/BASE/]`: a private HTTP origin the operator trusts (no SSRF guard; `BASE/`
    ///   before every key), with ``headers`` on every request.
    ///
    /// The source belongs to the operator: its answers are cached like local files, credentials or not.
    public struct Source: Sendable, Codable, Hashable {
        /// `file:///DIR`, `s3://BUCKET[/PREFIX]` or `http(s)://HOST[/BASE/]`.
        public var url: String
        /// S3: the endpoint (`http://127.0.0.1:9000`); `nil`: ``ServerConfiguration/s3``'s, else AWS's for the region.
        public var endpoint: String?
        /// S3: the signing region; `nil`: ``ServerConfiguration/s3``'s.
        public var region: String?
        /// S3: path-style addressing (`ENDPOINT/BUCKET/KEY`); `nil`: ``ServerConfiguration/s3``'s.
        public var pathStyle: Bool?
        /// S3: the access key id; `nil`: ``ServerConfiguration/s3``'s, else `AWS_ACCESS_KEY_ID` and its companions.
        /// In the config file each of the three credentials may instead be read from a file, as systemd and
        /// Kubernetes mount secrets: `accessKeyIDFile`, `secretAccessKeyFile`, `sessionTokenFile` (a path;
        /// trailing line breaks dropped; giving both a value and its file is an error).
        public var accessKeyID: String?
        /// S3: the secret access key.
        public var secretAccessKey: String?
        /// S3: a session token (temporary credentials).
        public var sessionToken: String?
        /// HTTP origins: header fields added to every request (`Authorization`, say). Only an `http(s)`
        /// source may have them: on an S3 or `file://` source they are a configuration error.
        public var headers: [String: String]

        /// A source at `url`, every other field at its default.
        public init(url: String) {
            self.url = url
            headers = [:]
        }

        private enum CodingKeys: String, CodingKey {
            case url, endpoint, region, pathStyle, accessKeyID, secretAccessKey, sessionToken, headers
            case accessKeyIDFile, secretAccessKeyFile, sessionTokenFile
        }

        /// The value of `key`, or the secret in the file `fileKey` names; an error when both are given or
        /// the file cannot be read.
        private static func secret(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, file fileKey: CodingKeys) throws -> String? {
            let value = try c.decodeIfPresent(String.self, forKey: key)
            guard let path = try c.decodeIfPresent(String.self, forKey: fileKey) else { return value }
            let context = DecodingError.Context(codingPath: c.codingPath + [fileKey], debugDescription: "")
            guard value == nil else {
                throw DecodingError.dataCorrupted(.init(codingPath: context.codingPath,
                                                        debugDescription: "\(key.rawValue) and \(fileKey.rawValue) are both set: give the secret once"))
            }
            guard let text = ServeSettingsReader.secret(atPath: path) else {
                throw DecodingError.dataCorrupted(.init(codingPath: context.codingPath,
                                                        debugDescription: "\(fileKey.rawValue) '\(path)' names no readable file"))
            }
            return text
        }

        /// Decodes a source of the config file; only `url` is required.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            url = try c.decode(String.self, forKey: .url)
            endpoint = try c.decodeIfPresent(String.self, forKey: .endpoint)
            region = try c.decodeIfPresent(String.self, forKey: .region)
            pathStyle = try c.decodeIfPresent(Bool.self, forKey: .pathStyle)
            accessKeyID = try Self.secret(c, .accessKeyID, file: .accessKeyIDFile)
            secretAccessKey = try Self.secret(c, .secretAccessKey, file: .secretAccessKeyFile)
            sessionToken = try Self.secret(c, .sessionToken, file: .sessionTokenFile)
            headers = try c.decodeIfPresent([String: String].self, forKey: .headers) ?? [:]
        }

        /// Encodes the source with its credentials as values (never as the files they were read from).
        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(url, forKey: .url)
            try c.encodeIfPresent(endpoint, forKey: .endpoint)
            try c.encodeIfPresent(region, forKey: .region)
            try c.encodeIfPresent(pathStyle, forKey: .pathStyle)
            try c.encodeIfPresent(accessKeyID, forKey: .accessKeyID)
            try c.encodeIfPresent(secretAccessKey, forKey: .secretAccessKey)
            try c.encodeIfPresent(sessionToken, forKey: .sessionToken)
            try c.encode(headers, forKey: .headers)
        }

        /// What ``url`` names.
        public enum Kind: Sendable, Hashable {
            /// A directory (its path).
            case directory(String)
            /// An S3 bucket and the prefix (empty, or ending in `/`) before every key.
            case bucket(String, prefix: String)
            /// An HTTP origin's base URL, ending in `/`.
            case origin(URL)
        }

        /// What ``url`` names; throws for anything but the three forms.
        public func kind() throws(ServerConfigurationError) -> Kind {
            let lowered = url.lowercased()
            if lowered.hasPrefix("file://") {
                let path = String(url.dropFirst("file://".count))
                guard path.hasPrefix("/") else { throw ServerConfigurationError("source \(url) is not file:///DIR (an absolute path)") }
                return .directory(path)
            }
            if lowered.hasPrefix("s3://") {
                let rest = url.dropFirst("s3://".count).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
                let bucket = String(rest[0])
                guard !bucket.isEmpty else { throw ServerConfigurationError("source \(url) has no bucket (s3://BUCKET[/PREFIX])") }
                var prefix = rest.count > 1 ? String(rest[1]) : ""
                if !prefix.isEmpty, !prefix.hasSuffix("/") { prefix += "/" }
                return .bucket(bucket, prefix: prefix)
            }
            if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
                var text = url
                if !text.hasSuffix("/") { text += "/" }
                guard let base = URL(string: text), let host = base.host, !host.isEmpty, base.query == nil else {
                    throw ServerConfigurationError("source \(url) is not http(s)://HOST[/BASE/]")
                }
                return .origin(base)
            }
            throw ServerConfigurationError("source \(url) is not file:///DIR, s3://BUCKET[/PREFIX] or http(s)://HOST[/BASE/]")
        }

        /// Parses `NAME=URL` (the `--source` syntax): the name and the source.
        public static func parse(_ text: String) throws(ServerConfigurationError) -> (name: String, source: Source) {
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
                throw ServerConfigurationError("source '\(text)' is not NAME=URL")
            }
            let source = Source(url: String(text[text.index(after: equals)...]))
            _ = try source.kind()
            return (String(text[..<equals]), source)
        }

        /// Whether `name` may name a source: letters, digits, `-`, `_` and `.`, 1…64 characters.
        static func isValidName(_ name: String) -> Bool {
            (1...64).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        }
    }

    /// What S3 sources share unless they say otherwise, and the buckets clients may name themselves.
    public struct S3: Sendable, Codable, Hashable {
        /// The endpoint (`--s3-endpoint`); `nil`: AWS's for ``region``.
        public var endpoint: String? = nil
        /// The signing region (`--s3-region`), `us-east-1` by default.
        public var region: String = "us-east-1"
        /// Path-style addressing (`--s3-path-style`); `nil`: path style with an endpoint, virtual-hosted
        /// addressing on AWS.
        public var pathStyle: Bool? = nil
        /// Buckets that `/v1/resize?src=s3://BUCKET/KEY` may read (`--allow-bucket`), with these settings and
        /// the environment's credentials. Empty (the default): clients can name no bucket, only the
        /// operator's sources.
        public var allowedBuckets: [String] = []
        /// The access key of every S3 source without its own; `nil`: `AWS_ACCESS_KEY_ID`,
        /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from the environment.
        public var accessKeyID: String? = nil
        /// See ``accessKeyID``.
        public var secretAccessKey: String? = nil
        /// See ``accessKeyID``.
        public var sessionToken: String? = nil

        /// The defaults above.
        public init() {}

        /// Decodes the `s3` object of a config file through the settings' declaration; absent fields keep their defaults.
        public init(from decoder: any Decoder) throws {
            self = try ServeSettingsReader.section("s3", of: decoder, \.s3)
        }
    }

    /// Checks the sources' names and URLs, and that only HTTP origins have headers.
    func validateSources() throws(ServerConfigurationError) {
        for (name, source) in sources {
            guard Source.isValidName(name) else {
                throw ServerConfigurationError("source name '\(name)' must be 1…64 letters, digits, -, _ or .")
            }
            let kind = try source.kind()
            if !source.headers.isEmpty {
                guard case .origin = kind else {
                    let names = source.headers.keys.sorted().joined(separator: ", ")
                    throw ServerConfigurationError("source '\(name)' (\(source.url)) has headers (\(names)), but only http(s) origins send headers: an S3 source signs its requests with its credentials and a directory makes none; remove the --source-header (or the config's \"headers\") for '\(name)'")
                }
            }
            if source.accessKeyID != nil, source.secretAccessKey == nil {
                throw ServerConfigurationError("source '\(name)' has an access key id without a secret access key")
            }
        }
        if let endpoint = s3.endpoint, URL(string: endpoint)?.host == nil {
            throw ServerConfigurationError("--s3-endpoint \(endpoint) is not an http(s) URL")
        }
    }
}
#endif
