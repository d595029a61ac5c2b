import Foundation

/// The configuration of an nginx run from a scratch directory (`nginx -p PREFIX -c PREFIX/nginx.conf`), as
/// the end-to-end tests and `tessera bench serve` start it: in the foreground, its pid file, error log and
/// every temporary directory inside the prefix (so it needs no root and leaves nothing behind), files
/// served from `PREFIX/www`, listening on 127.0.0.1 only. The caller adds its own `http` settings and
/// `server` locations.
public struct NginxConfiguration: Sendable {
    /// The directory nginx runs from.
    public var prefix: URL
    /// The loopback port of its one server.
    public var port: Int
    /// Worker processes; with `masterProcess` false nginx runs as one process.
    public var workers = 1
    /// Whether a master process manages the workers.
    public var masterProcess = true
    /// `events { worker_connections N; }`.
    public var workerConnections = 1024
    /// Lines inside `http { … }` before the server (types, logs, sendfile…).
    public var http = ""
    /// Lines inside `server { … }` after `listen` and `root`.
    public var server = ""

    /// A configuration for nginx run from `prefix`, listening on 127.0.0.1:`port`.
    public init(prefix: URL, port: Int) {
        self.prefix = prefix
        self.port = port
    }

    /// `PREFIX/nginx.conf`.
    public var file: URL { prefix.appendingPathComponent("nginx.conf") }

    /// The configuration's text.
    public var text: String {
        let p = prefix.path
        return """
        daemon off;
        master_process \(masterProcess ? "on" : "off");
        worker_processes \(workers);
        pid \(p)/nginx.pid;
        error_log \(p)/error.log warn;
        events { worker_connections \(workerConnections); }
        http {
        \(http)
            client_body_temp_path \(p)/tmp/body;
            proxy_temp_path \(p)/tmp/proxy;
            fastcgi_temp_path \(p)/tmp/fastcgi;
            uwsgi_temp_path \(p)/tmp/uwsgi;
            scgi_temp_path \(p)/tmp/scgi;
            server {
                listen 127.0.0.1:\(port);
                root \(p)/www;
        \(server)
            }
        }

        """
    }

    /// Writes `file` and makes `PREFIX/tmp` and `PREFIX/www`.
    public func write() throws {
        for directory in ["tmp", "www"] {
            try FileManager.default.createDirectory(at: prefix.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        try text.write(to: file, atomically: true, encoding: .utf8)
    }
}
