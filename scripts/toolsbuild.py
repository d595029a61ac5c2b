"""The tools package's build as scripts/check-docs and scripts/build-docs read it (a module, not a command).

Both need the library's modules compiled and the flags that compiled them: `build()` makes the build the
tests run from (Tools/ with its tests), `compile_arguments()` reads each module's swiftc arguments from its
build manifest (CONFIGURATION.yaml), and `extract()` runs `swift-symbolgraph-extract` on a module with the
search flags of those arguments. The configuration is debug unless TESSERA_TOOLS_CONFIGURATION says
release, with the extra `swift build` arguments of TESSERA_TOOLS_BUILD_FLAGS (`make test` passes release
and the Makefile's TEST_RELEASE_FLAGS: one release build, with -enable-testing, serves the documentation,
the tests and the end-to-end suites). TESSERA_TOOLS_SCRATCH names another scratch directory than Tools/.build
(`swift build --scratch-path`).
"""
import json
import os
import shlex
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(ROOT, "Tools")
SCRATCH = os.environ.get("TESSERA_TOOLS_SCRATCH") or os.path.join(TOOLS, ".build")
SWIFT = os.environ.get("SWIFT", "swift")
CONFIGURATION = os.environ.get("TESSERA_TOOLS_CONFIGURATION") or "debug"
BUILD_FLAGS = shlex.split(os.environ.get("TESSERA_TOOLS_BUILD_FLAGS", ""))


def run_logged(arguments, echo=True):
    """Runs a command with its output (stdout and stderr) passed through unless not `echo`; returns (exit status,
    output lines)."""
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    lines = []
    for line in process.stdout:
        if echo:
            sys.stdout.write(line)
            sys.stdout.flush()
        lines.append(line.rstrip("\n"))
    return process.wait(), lines


def build(script):
    """The build the tests run from (with -enable-testing: SwiftPM's own in debug, TEST_RELEASE_FLAGS' in release):
    in `make test` the tests then start without building anything more (building only the library with
    `--target` would use other compiler flags and rebuild every module). A compiler warning in the library's own sources (Sources/) fails it, as it failed the
    documentation build when that built the library itself; the dependencies' warnings are SwiftPM's to suppress.
    Exits on failure."""
    arguments = [SWIFT, "build", "--package-path", TOOLS, "--build-tests", "-c", CONFIGURATION] + BUILD_FLAGS
    if os.environ.get("TESSERA_TOOLS_SCRATCH"):
        arguments += ["--scratch-path", SCRATCH]
    status, lines = run_logged(arguments)
    if status != 0:
        sys.exit(f"{script}: swift build failed (exit {status})")
    sources = os.path.join(ROOT, "Sources") + os.sep
    warnings = [line for line in lines if "warning:" in line and line.startswith(sources)]
    if warnings:
        sys.exit(f"{script}: {len(warnings)} compiler warnings in Sources/ (above) fail the build:\n" + "\n".join(warnings))


def manifest_commands(script):
    """The swiftc arguments of every command in the build manifest, CONFIGURATION.yaml, one list each."""
    manifest_path = os.path.join(SCRATCH, f"{CONFIGURATION}.yaml")
    if not os.path.exists(manifest_path):
        sys.exit(f"{script}: no {manifest_path}: build the tools package first (swift build --package-path Tools -c {CONFIGURATION})")
    with open(manifest_path, encoding="utf-8") as manifest:
        for line in manifest:
            line = line.strip()
            if line.startswith("args: ["):
                yield json.loads(line[len("args: "):])


def module_name(arguments):
    """The `-module-name` of a swiftc command, or None."""
    return arguments[arguments.index("-module-name") + 1] if "-module-name" in arguments else None


def compile_arguments(modules, script):
    """The swiftc arguments SwiftPM used for each of `modules`, keyed by module name, from CONFIGURATION.yaml."""
    found = {}
    for arguments in manifest_commands(script):
        if "-emit-module" in arguments and module_name(arguments) in modules:
            found[module_name(arguments)] = arguments
    missing = [m for m in modules if m not in found]
    if missing:
        sys.exit(f"{script}: no compile command for {', '.join(missing)} in {CONFIGURATION}.yaml")
    return found


def link_arguments(product, script):
    """The swiftc arguments SwiftPM linked the executable `product` with, from CONFIGURATION.yaml (the command
    whose `-module-name` is the product and that has `-emit-executable`)."""
    for arguments in manifest_commands(script):
        if "-emit-executable" in arguments and module_name(arguments) == product:
            return arguments
    sys.exit(f"{script}: no link command of {product} in {CONFIGURATION}.yaml")


def search_flags(arguments):
    """The arguments that let another tool load the module's dependencies: -I, -F and -Xcc pairs."""
    flags, index = [], 0
    while index < len(arguments):
        argument = arguments[index]
        if argument in ("-I", "-F", "-Xcc", "-target", "-sdk", "-resource-dir"):
            flags += arguments[index:index + 2]
            index += 2
            continue
        if argument.startswith("-I") or argument.startswith("-F"):
            flags.append(argument)
        index += 1
    return flags


def toolchain_tool(name):
    """A tool of the toolchain that runs `swift` (it sits next to it), else `name` from PATH."""
    swift = shutil.which(SWIFT)
    beside = os.path.join(os.path.dirname(os.path.realpath(swift)), name) if swift else ""
    return beside if os.path.exists(beside) else name


def extract(module, arguments, output, options):
    """swift-symbolgraph-extract of `module` into `output` with `options` (access level, members, …); returns
    its exit status and output lines (not printed)."""
    return run_logged([toolchain_tool("swift-symbolgraph-extract"), "-module-name", module, "-output-dir", output]
                      + options + search_flags(arguments), echo=False)
