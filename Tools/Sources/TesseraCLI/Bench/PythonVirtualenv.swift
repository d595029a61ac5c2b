import ArgumentParser
import Foundation
import TesseraBenchSupport

/// A virtualenv under `.build` holding the PyPI packages of a benchmark's peer (Pillow and pyvips for
/// `bench ingest`, thumbor for `bench serve`) or a test's (moto's S3 server for the S3 client tests), never
/// the system's Python packages.
enum PythonVirtualenv {
    /// `.build/NAME` of the package this binary was built in (found from the binary's real path), else
    /// `.build/NAME` in the current directory.
    static func defaultLocation(_ name: String) -> URL {
        let executable = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return (buildDirectory(containing: executable) ?? URL(fileURLWithPath: ".build")).appendingPathComponent(name)
    }

    /// The Python peers of the benchmarks and tests: the PyPI package (with its extras) and any packages
    /// installed beside it, the module it provides, the virtualenv's name under `.build` (Pillow and pyvips
    /// for `bench ingest`, thumbor for `bench serve`, moto's `moto_server` for the S3 client tests) and the
    /// Python expression that prints its version.
    struct Peer {
        var package: String
        var module: String
        var name: String
        /// Installed together with `package` (pyvips's binding needs `pyvips-binary`, which holds libvips).
        var companions: [String] = []
        /// Printed by the virtualenv's interpreter after `import module` to name the version.
        var version: String

        /// Modules the probe imports besides `module` (the companions'), so that a virtualenv made before
        /// they were added is made whole again.
        var imports: [String] = []

        init(package: String, module: String, name: String, companions: [String] = [], imports: [String] = [], version: String? = nil) {
            self.package = package
            self.module = module
            self.name = name
            self.companions = companions
            self.imports = imports
            self.version = version ?? "\(module).__version__"
        }

        static let pillow = Peer(package: "pillow", module: "PIL", name: "pillow-venv")
        /// pyvips with the libvips build that PyPI's `pyvips-binary` ships (not Debian's libvips); its version
        /// names both, "3.2.0 (libvips 8.18.7)".
        static let pyvips = Peer(package: "pyvips", module: "pyvips", name: "pyvips-venv", companions: ["pyvips-binary"],
                                 version: "'%s (libvips %d.%d.%d)' % (pyvips.__version__, pyvips.version(0), pyvips.version(1), pyvips.version(2))")
        /// thumbor with the URL builders the dialect tests sign with: libthumbor (thumbor's own) and
        /// pyimgproxy (an imgproxy client).
        static let thumbor = Peer(package: "thumbor", module: "thumbor", name: "thumbor-venv", companions: ["libthumbor", "pyimgproxy"],
                                  imports: ["libthumbor", "pyimgproxy"])
        static let moto = Peer(package: "moto[server]", module: "moto", name: "moto-venv")

        /// The name `--only` takes: the package without its extras (`moto` for `moto[server]`).
        var label: String { String(package.prefix { $0 != "[" }) }
    }

    /// The virtualenv's interpreter and the version `module.__version__` reports. Never installs: a
    /// benchmark only talks to loopback, so a missing virtualenv is an error naming `tessera bench peers`,
    /// the set-up step that creates it (`make bench`, `make bench-serve` and `make test` run it).
    static func existing(_ venv: URL, _ peer: Peer) throws -> (python: String, version: String) {
        let interpreter = venv.appendingPathComponent("bin/python").path
        let probe = ["-c", "import \(([peer.module] + peer.imports).joined(separator: ", ")); print(\(peer.version))"]
        guard FileManager.default.isExecutableFile(atPath: interpreter), let version = try? Worker.output(interpreter, probe) else {
            throw ValidationError("no \(peer.package) virtualenv at \(venv.path): create it with `tessera bench peers --only \(peer.label) --\(peer.label)-venv \(venv.path)`")
        }
        return (interpreter, version)
    }

    /// Creates the virtualenv with `python -m venv` and `pip install package companions…` (PyPI; 30 s per
    /// network wait, 2 retries, so that a machine without PyPI fails in minutes) unless the module already
    /// imports there; returns what ``existing(_:_:)`` returns.
    static func create(_ venv: URL, _ peer: Peer, python: String) throws -> (python: String, version: String) {
        if let ready = try? existing(venv, peer) { return ready }
        guard FileManager.default.isExecutableFile(atPath: python) else { throw ValidationError("\(python) not found to create \(venv.path)") }
        let packages = [peer.package] + peer.companions
        Terminal.error("bench peers: creating \(venv.path) with PyPI \(packages.joined(separator: " + ")) (\(python) -m venv; pip install \(packages.joined(separator: " ")))")
        let created = !FileManager.default.fileExists(atPath: venv.path)
        do {
            _ = try Worker.output(python, ["-m", "venv", venv.path])
            _ = try Worker.output(venv.appendingPathComponent("bin/pip").path,
                                  ["install", "--quiet", "--disable-pip-version-check", "--timeout", "30", "--retries", "2", "--upgrade"] + packages)
            return try existing(venv, peer)
        } catch {
            // A virtualenv without its package is no peer: one made here goes again, so none is half there.
            if created { try? FileManager.default.removeItem(at: venv) }
            throw error
        }
    }
}
