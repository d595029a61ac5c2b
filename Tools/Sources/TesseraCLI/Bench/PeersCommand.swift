import ArgumentParser
import Foundation

/// `tessera bench peers`: the set-up step that installs the Python peers the benchmarks compare against.
struct PeersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers",
        abstract: "Create the virtualenvs of the benchmarks' and tests' Python peers (PyPI Pillow, pyvips, thumbor, moto) when missing.",
        discussion: """
        The one step that goes to PyPI: `bench ingest` and `bench serve` only use these virtualenvs (and list \
        Pillow, pyvips or thumbor as skipped without them), so that a measurement only ever talks to 127.0.0.1; \
        the S3 client tests run moto's `moto_server` from its virtualenv and are skipped without it. \
        `make bench`, `make bench-serve` and `make test` run this first. Each virtualenv is made with \
        `--python -m venv` and `pip install PACKAGE…` (pyvips: `pyvips` and `pyvips-binary`, the libvips build \
        PyPI ships), and left alone when its module already imports. Prints one line per peer: package, \
        version, virtualenv.
        """
    )

    @Option(help: "Python used to create the virtualenvs.") var python = "/usr/bin/python3"
    @Option(help: "The Pillow virtualenv (default: .build/pillow-venv next to this binary).") var pillowVenv: String?
    @Option(help: "The pyvips virtualenv (default: .build/pyvips-venv next to this binary).") var pyvipsVenv: String?
    @Option(help: "The thumbor virtualenv (default: .build/thumbor-venv next to this binary).") var thumborVenv: String?
    @Option(help: "The moto virtualenv of the S3 client tests (default: .build/moto-venv next to this binary).") var motoVenv: String?
    @Option(help: "Only this peer: pillow, pyvips, thumbor or moto.") var only: String?

    func validate() throws {
        if let only, !["pillow", "pyvips", "thumbor", "moto"].contains(only) { throw ValidationError("--only is pillow, pyvips, thumbor or moto, not \(only)") }
    }

    func run() async throws {
        let peers: [(PythonVirtualenv.Peer, String?)] = [(.pillow, pillowVenv), (.pyvips, pyvipsVenv), (.thumbor, thumborVenv), (.moto, motoVenv)]
        for (peer, venv) in peers where only == nil || only == peer.label {
            let location = venv.map { URL(fileURLWithPath: $0) } ?? PythonVirtualenv.defaultLocation(peer.name)
            let ready = try PythonVirtualenv.create(location, peer, python: python)
            print("\(peer.package) \(ready.version) \(location.path)")
        }
    }
}
