import ArgumentParser
import Foundation
import TesseraBenchSupport

/// Where `bench serve` keeps the sources tessera serves: the scratch root (`files`), or that root and, for the
/// extra `tessera-s3` server, a bucket of a local moto_server (`s3`).
enum ServeBenchSource: String, ExpressibleByArgument, CaseIterable, Codable {
    /// The scratch root only: tessera, thumbor and nginx read files.
    case files
    /// The scratch root, and the same files uploaded to a bucket that `tessera-s3` reads through `--source`.
    case s3
}

/// The S3 side of `bench serve --source s3`: a `moto_server` on 127.0.0.1 (a Python fake of S3, IAM
/// authentication on: every request signed and checked) from the moto virtualenv, one bucket holding every
/// source and hot path of the scratch root under the same relative keys, and the `tessera-s3` server that
/// reads it as the named source `@bench`.
final class ServeBenchS3 {
    /// The bucket the sources are uploaded to.
    static let bucket = "tessera-bench"
    /// The prefix before every key in ``bucket``.
    static let prefix = "root"
    /// The source's name in `tessera serve --source NAME=s3://…`, and so in `/v1/thumb/@NAME/…`.
    static let sourceName = "bench"

    /// The running moto server.
    let moto: MotoServer
    /// moto's version (`moto.__version__` in the virtualenv).
    let version: String
    /// Objects uploaded.
    let objects: Int
    /// Bytes uploaded.
    let bytes: Int
    /// Seconds the upload took (boto3 in one Python process).
    let uploadSeconds: Double

    private init(moto: MotoServer, version: String, objects: Int, bytes: Int, uploadSeconds: Double) {
        self.moto = moto
        self.version = version
        self.objects = objects
        self.bytes = bytes
        self.uploadSeconds = uploadSeconds
    }

    /// Starts moto from `venv` (a clear error naming `tessera bench peers --only moto` when it is missing),
    /// creates ``bucket`` and uploads the files at `paths` (relative to `root`, the same paths tessera reads
    /// from its root) as `prefix/PATH`.
    static func start(venv: URL, root: URL, paths: [String]) async throws -> ServeBenchS3 {
        let environment = try PythonVirtualenv.existing(venv, .moto)
        guard FileManager.default.isExecutableFile(atPath: venv.appendingPathComponent("bin/moto_server").path) else {
            throw ValidationError("the moto virtualenv at \(venv.path) has no bin/moto_server: recreate it with `tessera bench peers --only moto --moto-venv \(venv.path)`")
        }
        let moto = try await MotoServer(virtualenv: venv)
        do {
            try await moto.createBucket(bucket)
            let files = paths.map { (key: prefix + "/" + $0, path: root.appendingPathComponent($0)) }
            let start = ContinuousClock.now
            for (type, extensions) in [("image/jpeg", ["jpg", "jpeg"]), ("image/png", ["png"])] {
                let chosen = files.filter { extensions.contains($0.path.pathExtension.lowercased()) }
                if !chosen.isEmpty { _ = try await moto.upload(bucket: bucket, files: chosen, contentType: type) }
            }
            let elapsed = ContinuousClock.now - start
            let bytes = files.reduce(0) { sum, file in
                sum + ((try? FileManager.default.attributesOfItem(atPath: file.path.path)[.size] as? Int) ?? 0)
            }
            return ServeBenchS3(moto: moto, version: environment.version, objects: files.count, bytes: bytes,
                                uploadSeconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        } catch {
            moto.stop()
            throw error
        }
    }

    /// `tessera-s3`: this binary's `serve` exactly as the `tessera` server runs, with its sources read from
    /// ``bucket`` through `--source bench=s3://BUCKET/PREFIX --s3-endpoint` (credentials in the child's
    /// `AWS_…` variables) instead of the root, and requests `/v1/thumb/@bench/PATH`.
    func server(binary: String, root: URL, size: Int, port: Int, sourceCheckInterval: Int, tables: @escaping () -> URL,
                tableCapacity: Int, log: URL) -> BenchServer {
        BenchServer.tessera(name: "tessera-s3", binary: binary, root: root, size: size, port: port, sourceCheckInterval: sourceCheckInterval,
                            tables: tables, tableCapacity: tableCapacity, log: log, pathPrefix: "@\(Self.sourceName)/",
                            extraArguments: ["--source", "\(Self.sourceName)=s3://\(Self.bucket)/\(Self.prefix)", "--s3-endpoint", moto.endpoint],
                            environment: ["AWS_ACCESS_KEY_ID": moto.accessKeyID, "AWS_SECRET_ACCESS_KEY": moto.secretAccessKey,
                                          "AWS_SESSION_TOKEN": "", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"])
    }

    /// Stops moto.
    func stop() { moto.stop() }
}
