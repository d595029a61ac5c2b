import Foundation
@_spi(Internal) import TesseraCore

/// A real `moto_server` (PyPI `moto[server]`, a fake of AWS's APIs) on 127.0.0.1 and a free port, with
/// IAM authentication on, for the S3 client tests.
///
/// moto checks signatures only after its first `INITIAL_NO_AUTH_ACTION_COUNT` actions (AWS API calls; its
/// own `/moto-api/` requests do not count). Starting it with the count at ``setupActions``, the three
/// unauthenticated calls create an IAM user, give it an inline policy allowing everything, and create its
/// access key (``accessKeyID``, ``secretAccessKey``); from then on moto recomputes the SigV4 signature of
/// every request with botocore and refuses a wrong one (`SignatureDoesNotMatch`, `InvalidAccessKeyId`).
/// Buckets and objects are then made with boto3 and that key, by the virtualenv's Python.
///
/// The virtualenv comes from `tessera bench peers --only moto` (`make test` runs it); tests skip and say
/// so when ``virtualenv()`` finds none. The server is stopped by ``stop()``, when the value is dropped,
/// and by a watchdog when the test process dies.
public final class MotoServer: Sendable {
    /// The unauthenticated actions the set-up makes: IAM `CreateUser`, `PutUserPolicy`, `CreateAccessKey`.
    public static let setupActions = 3

    /// The port on 127.0.0.1.
    public let port: Int
    /// The IAM user's access key id.
    public let accessKeyID: String
    /// The IAM user's secret access key.
    public let secretAccessKey: String
    private let python: URL
    private let scratch: URL
    private let wrapper: ChildProcess
    private let stopped = LockedValue(false)

    /// `http://127.0.0.1:PORT`.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// The moto virtualenv next to the running binary (`.build/moto-venv` of the `.build` directory the test
    /// binary lies in, where `tessera bench peers` puts it), or `nil` when it has no `moto_server`.
    public static func virtualenv() -> URL? {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        guard let venv = buildDirectory(containing: executable)?.appendingPathComponent("moto-venv"),
              FileManager.default.isExecutableFile(atPath: venv.appendingPathComponent("bin/moto_server").path) else { return nil }
        return venv
    }

    /// A failure to start moto or to run a set-up step, with what it printed.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Starts `moto_server` from `virtualenv`, waits until it answers, and creates the IAM user and its key.
    public init(virtualenv: URL) async throws {
        let python = virtualenv.appendingPathComponent("bin/python")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-moto-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let port = try Origin.unusedPort()
        let log = scratch.appendingPathComponent("moto.log").path
        // The watchdog ends moto when this test process goes away, however it goes (a crash included).
        let script = """
        '\(virtualenv.path)/bin/moto_server' -H 127.0.0.1 -p \(port) & server=$!
        tail --pid=\(getpid()) -f /dev/null & watch=$!
        wait -n $server $watch
        kill $server $watch 2>/dev/null
        wait
        """
        var environment = ProcessInfo.processInfo.environment
        environment["INITIAL_NO_AUTH_ACTION_COUNT"] = String(Self.setupActions)
        let output = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(output) }
        let wrapper = try ChildProcess.spawn("/bin/bash", ["-c", script], environment: environment,
                                             standardOutput: output, standardError: output, newProcessGroup: true)
        let key: [String]
        do {
            try await onOwnThread { try Self.waitUntilAnswering(port: port, wrapper: wrapper, log: log) }
            key = try await Self.python(python, Self.createUser, ["http://127.0.0.1:\(port)"], environment: [:])
                .split(separator: " ").map(String.init)
            guard key.count == 2 else { throw Failure(description: "the IAM set-up printed \(key)") }
        } catch {
            wrapper.signalGroup(SIGTERM)
            _ = await wrapper.wait()
            try? FileManager.default.removeItem(at: scratch)
            throw error
        }
        (self.python, self.scratch, self.port, self.wrapper) = (python, scratch, port, wrapper)
        (accessKeyID, secretAccessKey) = (key[0], key[1])
    }

    deinit { stop() }

    /// Stops moto (and its watchdog) and waits until they have exited.
    public func stop() {
        guard stopped.withLock({ stopped in defer { stopped = true }; return !stopped }) else { return }
        wrapper.signalGroup(SIGTERM)
        _ = wrapper.wait()
        try? FileManager.default.removeItem(at: scratch)
    }

    /// Creates `bucket` (signed with the IAM user's key).
    public func createBucket(_ bucket: String) async throws {
        _ = try await boto3("s3.create_bucket(Bucket=sys.argv[2])", [bucket])
    }

    /// Stores `data` as `key` in `bucket` with `contentType`, replacing what was there; returns the new `ETag`.
    public func putObject(bucket: String, key: String, data: [UInt8], contentType: String) async throws -> String {
        let file = scratch.appendingPathComponent(UUID().uuidString)
        try Data(data).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try await boto3("""
            print(s3.put_object(Bucket=sys.argv[2], Key=sys.argv[3], Body=open(sys.argv[4], "rb").read(),
                                ContentType=sys.argv[5])["ETag"], end="")
            """, [bucket, key, file.path, contentType])
    }

    /// Stores each file of `files` (a key and the path of a file on disk) in `bucket` as that key with
    /// `contentType`, replacing what was there, in one run of the virtualenv's Python; returns the new
    /// `ETag`s in the order of `files`.
    public func upload(bucket: String, files: [(key: String, path: URL)], contentType: String) async throws -> [String] {
        let list = scratch.appendingPathComponent(UUID().uuidString + ".json")
        let entries = files.map { ["key": $0.key, "path": $0.path.path] }
        try JSONSerialization.data(withJSONObject: entries).write(to: list)
        defer { try? FileManager.default.removeItem(at: list) }
        let printed = try await boto3("""
            import json
            for entry in json.load(open(sys.argv[3])):
                with open(entry["path"], "rb") as body:
                    print(s3.put_object(Bucket=sys.argv[2], Key=entry["key"], Body=body.read(), ContentType=sys.argv[4])["ETag"])
            """, [bucket, list.path, contentType])
        let etags = printed.split(separator: "\n").map(String.init)
        guard etags.count == files.count else { throw Failure(description: "the upload printed \(etags.count) ETags for \(files.count) files") }
        return etags
    }

    /// Runs `statements` in the virtualenv's Python with `s3`, a boto3 S3 client on this server signed with
    /// the IAM user's key, and `sys.argv[2…]` = `arguments`; returns what it printed.
    public func boto3(_ statements: String, _ arguments: [String]) async throws -> String {
        try await Self.python(python, Self.s3Prelude + statements, [endpoint] + arguments,
                              environment: ["AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey])
    }

    /// IAM `CreateUser`, `PutUserPolicy` (allow everything), `CreateAccessKey`; prints `ID SECRET`.
    private static let createUser = """
        import boto3, json, sys
        iam = boto3.client("iam", endpoint_url=sys.argv[1], region_name="us-east-1",
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="tessera")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="tessera", PolicyName="everything", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="tessera")["AccessKey"]
        print(key["AccessKeyId"], key["SecretAccessKey"], end="")
        """

    private static let s3Prelude = """
        import boto3, sys
        s3 = boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1")

        """

    /// Runs `python -c script arguments…` (never through a proxy, and without the user's AWS files) and returns
    /// its standard output, or throws with what it printed when it fails.
    private static func python(_ python: URL, _ script: String, _ arguments: [String], environment: [String: String]) async throws -> String {
        var extra = environment
        for (name, value) in ["NO_PROXY": "*", "no_proxy": "*", "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"] {
            extra[name] = value
        }
        let run = try await ProgramRun.run(python, ["-c", script] + arguments, environment: extra)
        guard run.status == 0 else { throw Failure(description: "moto set-up failed: \(run)") }
        return run.output
    }

    /// Polls moto's own `/moto-api/` page (which is not an action, so it does not use up the
    /// unauthenticated ones) until it answers, or fails with moto's log after 60 s or when moto exits.
    private static func waitUntilAnswering(port: Int, wrapper: ChildProcess, log: String) throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if (try? RawHTTP.getBlocking(port: port, "/moto-api/"))?.status == 200 { return }
            guard isRunning(wrapper.pid) else { break }
            usleep(20_000)   // polling an external process's readiness, bounded by the deadline
        }
        let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? "(no log)"
        throw Failure(description: "moto_server did not answer on 127.0.0.1:\(port): \(printed.suffix(4000))")
    }

    /// Whether `pid` is alive and not a zombie waiting to be reaped.
    private static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return false
        }
        return stat[stat.index(after: close)...].split(separator: " ").first != "Z"
    }
}
