import ArgumentParser
import Foundation

/// A virtualenv under `.build` holding one PyPI package for a benchmark's peer (Pillow for `bench ingest`,
/// thumbor for `bench serve`), never the system's Python packages.
enum PythonVirtualenv {
    /// `.build/NAME` of the package this binary was built in (found from the binary's real path), else
    /// `.build/NAME` in the current directory.
    static func defaultLocation(_ name: String) -> URL {
        var url = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        while url.path != "/" {
            url.deleteLastPathComponent()
            if url.lastPathComponent == ".build" { return url.appendingPathComponent(name) }
        }
        return URL(fileURLWithPath: ".build/\(name)")
    }

    /// The virtualenv's interpreter and the version `module.__version__` reports; creates the virtualenv
    /// with `python -m venv` and runs `pip install package` when the module does not import.
    static func ensure(_ venv: URL, python: String, package: String, module: String, by command: String) throws -> (python: String, version: String) {
        let interpreter = venv.appendingPathComponent("bin/python").path
        let probe = ["-c", "import \(module); print(\(module).__version__)"]
        if FileManager.default.isExecutableFile(atPath: interpreter), let version = try? Worker.output(interpreter, probe) {
            return (interpreter, version)
        }
        guard FileManager.default.isExecutableFile(atPath: python) else { throw ValidationError("\(python) not found to create \(venv.path)") }
        Terminal.error("\(command): creating \(venv.path) with PyPI \(package) (\(python) -m venv; pip install \(package))")
        _ = try Worker.output(python, ["-m", "venv", venv.path])
        _ = try Worker.output(venv.appendingPathComponent("bin/pip").path,
                              ["install", "--quiet", "--disable-pip-version-check", "--upgrade", package])
        return (interpreter, try Worker.output(interpreter, probe))
    }
}
