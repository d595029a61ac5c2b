import Foundation
import Testing
import TesseraTestSupport

/// The Debian packages a dependent needs to build the library are listed once, in `scripts/setup`'s
/// `build_packages` array. Every `apt-get install` command in the documentation (README.md, docs/,
/// the DocC articles) must name exactly those packages, and README.md and the DocC article
/// "Getting started" must each carry one. The test and bench packages setup also installs
/// (`test_packages`, `bench_packages`) are this repository's own and are not part of the list.
@Suite struct DocsPackageListTests {
    /// The repository root (this file is Tools/Tests/TesseraToolsTests/DocsPackageListTests.swift).
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The documents that must list the build packages.
    static let requiredDocuments = ["README.md", "Sources/Tessera/Tessera.docc/GettingStarted.md"]

    /// The words of the bash array `name=(…)` in `script` (which may span lines; comments dropped).
    static func bashArray(_ name: String, in script: String) -> [String]? {
        guard let start = script.range(of: "\n\(name)=(") else { return nil }
        var words: [String] = []
        for line in script[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false) {
            let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let closed = code.contains(")")
            words += code.prefix { $0 != ")" }.split(whereSeparator: \.isWhitespace).map(String.init)
            if closed { return words }
        }
        return nil
    }

    /// The package lists of every `apt-get install` command in the fenced code blocks of a Markdown
    /// text: the words after `install` that are not options, with `\` continuation lines joined. One
    /// list per command. (Prose that mentions the command is not a list.)
    static func aptInstallLists(in text: String) -> [[String]] {
        var lists: [[String]] = []
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        var inFence = false
        while index < lines.count {
            var command = lines[index]
            index += 1
            let trimmed = command.drop { $0 == " " }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                inFence.toggle()
                continue
            }
            guard inFence, let install = command.range(of: "apt-get install") else { continue }
            while command.hasSuffix("\\"), index < lines.count {
                command = String(command.dropLast()) + " " + lines[index]
                index += 1
            }
            // The command ends at a shell operator or a comment.
            let words = command[install.upperBound...].split(whereSeparator: \.isWhitespace).map(String.init)
                .prefix { !["&&", "||", ";", "|", "#"].contains($0) }
            lists.append(words.filter { !$0.hasPrefix("-") })
        }
        return lists
    }

    /// README.md, docs/**/*.md and the `.md` files of every DocC catalogue under Sources/.
    static func documents() throws -> [String] {
        var found = ["README.md"]
        for folder in ["docs", "Sources"] {
            let base = root.appendingPathComponent(folder)
            for case let relative as String in FileManager.default.enumerator(atPath: base.path) ?? NSEnumerator()
            where relative.hasSuffix(".md") && (folder == "docs" || relative.contains(".docc/")) {
                found.append("\(folder)/\(relative)")
            }
        }
        return found.sorted()
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func buildPackages() throws -> Set<String> {
        let packages = try #require(bashArray("build_packages", in: try read("scripts/setup")),
                                    "scripts/setup has no build_packages=(…) array")
        return Set(packages)
    }

    @Test func setupListsTheLibrarysBuildPackages() throws {
        let packages = try Self.buildPackages()
        // What the codecs and drawing link against; a list this test could not parse would be empty.
        for package in ["pkg-config", "libturbojpeg0-dev", "libheif-dev", "libavif-dev", "liblcms2-dev"] {
            #expect(packages.contains(package), "build_packages lacks \(package)")
        }
        // Every Debian package Package.swift names as a system library's provider is installed by setup.
        let manifest = try Self.read("Package.swift")
        let providers = manifest.matches(of: /\.apt\(\[([^\]]*)\]\)/).flatMap { match in
            match.output.1.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"")) }
        }
        #expect(providers.count >= 10)
        for provider in providers {
            #expect(packages.contains(provider), "Package.swift's provider \(provider) is not in setup's build_packages")
        }
    }

    @Test func everyPackageListInTheDocumentationMatchesSetup() throws {
        let expected = try Self.buildPackages()
        var listsPerDocument: [String: Int] = [:]
        for document in try Self.documents() {
            for list in Self.aptInstallLists(in: try Self.read(document)) {
                listsPerDocument[document, default: 0] += 1
                let named = Set(list)
                #expect(named == expected, """
                    \(document): apt-get install names \(named.sorted()); scripts/setup's build_packages: \
                    missing \(expected.subtracting(named).sorted()), extra \(named.subtracting(expected).sorted())
                    """)
                #expect(list.count == named.count, "\(document): a package is named twice")
            }
        }
        for document in Self.requiredDocuments {
            #expect(listsPerDocument[document, default: 0] >= 1, "\(document) lists no system packages")
        }
    }

    /// The comparison catches a list that lost a package or gained one.
    @Test func aStaleListIsCaught() throws {
        let expected = try Self.buildPackages()
        let complete = "```sh\nsudo apt-get install -y \(expected.sorted().joined(separator: " "))\n```"
        #expect(Self.aptInstallLists(in: complete).map(Set.init) == [expected])
        let continued = "```sh\napt-get install pkg-config libpng-dev \\\n    libgif-dev\n```\nsee `apt-get install` above\n"
        #expect(Self.aptInstallLists(in: continued) == [["pkg-config", "libpng-dev", "libgif-dev"]])
        let stale = complete.replacingOccurrences(of: " libdeflate-dev", with: "") + "\n```sh\napt-get install nginx-light\n```\n"
        let lists = Self.aptInstallLists(in: stale).map(Set.init)
        #expect(lists.count == 2)
        #expect(lists.allSatisfy { $0 != expected })
    }

    @Test func bashArraysAreReadAcrossLinesWithoutComments() {
        let script = "#!/bin/bash\nbuild_packages=(a b # c\n  d)\nother=(e)\n"
        #expect(Self.bashArray("build_packages", in: script) == ["a", "b", "d"])
        #expect(Self.bashArray("other", in: script) == ["e"])
        #expect(Self.bashArray("missing", in: script) == nil)
    }
}
