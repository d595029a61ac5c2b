import ArgumentParser
import Foundation
import TesseraTestSupport

/// A virtualenv under `.build` holding one PyPI package for a benchmark's peer (Pillow for `bench ingest`,
/// thumbor for `bench serve`) or a test's (moto's S3 server for the S3 client tests), never the system's
/// Python packages.
enum PythonVirtualenv {
    /// `.build/NAME` of the package this binary was built in (found from the binary's real path), else
    /// `.build/NAME` in the current directory.
    static func defaultLocation(_ name: String) -> URL {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return (buildDirectory(containing: executable) ?? URL(fileURLWithPath: ".build")).appendingPathComponent(name)
    }

    /// The Python peers of the benchmarks and tests: the PyPI package (with its extras), the module it
    /// provides and the virtualenv's name under `.build` (Pillow for `bench ingest`, thumbor for `bench serve`,
    /// moto's `moto_server` for the S3 client tests).
    struct Peer {
        var package: String
        var module: String
        var name: String

        static let pillow = Peer(package: "pillow", module: "PIL", name: "pillow-venv")
        static let thumbor = Peer(package: "thumbor", module: "thumbor", name: "thumbor-venv")
        static let moto = Peer(package: "moto[server]", module: "moto", name: "moto-venv")

        /// The name `--only` takes: the package without its extras (`moto` for `moto[server]`).
        var label: String { String(package.prefix { $0 != "[" }) }
    }

    /// The virtualenv's interpreter and the version `module.__version__` reports. Never installs: a
    /// benchmark only talks to loopback, so a missing virtualenv is an error naming `tessera bench peers`,
    /// the set-up step that creates it (`make bench`, `make bench-serve` and `make test` run it).
    static func existing(_ venv: URL, _ peer: Peer) throws -> (python: String, version: String) {
        let interpreter = venv.appendingPathComponent("bin/python").path
        let probe = ["-c", "import \(peer.module); print(\(peer.module).__version__)"]
        guard FileManager.default.isExecutableFile(atPath: interpreter), let version = try? Worker.output(interpreter, probe) else {
            throw ValidationError("no \(peer.package) virtualenv at \(venv.path): create it with `tessera bench peers --only \(peer.label) --\(peer.label)-venv \(venv.path)`")
        }
        return (interpreter, version)
    }

    /// Creates the virtualenv with `python -m venv` and `pip install package` (PyPI; 30 s per network wait,
    /// 2 retries, so that a machine without PyPI fails in minutes) unless the module already imports there;
    /// returns what ``existing(_:_:)`` returns.
    static func create(_ venv: URL, _ peer: Peer, python: String) throws -> (python: String, version: String) {
        if let ready = try? existing(venv, peer) { return ready }
        guard FileManager.default.isExecutableFile(atPath: python) else { throw ValidationError("\(python) not found to create \(venv.path)") }
        Terminal.error("bench peers: creating \(venv.path) with PyPI \(peer.package) (\(python) -m venv; pip install \(peer.package))")
        let created = !FileManager.default.fileExists(atPath: venv.path)
        do {
            _ = try Worker.output(python, ["-m", "venv", venv.path])
            _ = try Worker.output(venv.appendingPathComponent("bin/pip").path,
                                  ["install", "--quiet", "--disable-pip-version-check", "--timeout", "30", "--retries", "2", "--upgrade", peer.package])
            return try existing(venv, peer)
        } catch {
            // A virtualenv without its package is no peer: one made here goes again, so none is half there.
            if created { try? FileManager.default.removeItem(at: venv) }
            throw error
        }
    }
}
