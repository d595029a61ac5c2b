import Foundation
import Testing
import TesseraTestSupport

/// A `Package.swift` excerpt from a document (a ```swift block whose first line is `// Package.swift`).
struct ManifestExcerpt: Sendable {
    /// The line of the block's opening fence.
    var line: Int
    /// The block's text: arguments of `Package(…)` such as `dependencies: […], targets: […]`.
    var text: String
}

/// What the extractor made of one document's ```swift blocks.
struct DocumentSnippets: Sendable {
    /// The document, relative to the repository root.
    var path: String
    /// Blocks compiled as functions of this target.
    var compiled: Int
    /// Blocks marked ```swift no-compile.
    var skipped: Int
    /// Blocks that are `Package.swift` excerpts.
    var manifests: [ManifestExcerpt]
}

/// The repository root (this file is Tools/Tests/TesseraSnippetTests/SnippetCoverageTests.swift).
private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The compiled snippets are this target's generated sources: that they compile is checked by building
/// it. These tests check that nothing escaped the extraction, and evaluate the manifest excerpts.
@Suite struct SnippetCoverageTests {
    /// Every Markdown document of the repository that can hold examples (found here on its own, by a
    /// recursive walk, not by the plugin's listing), with the number of lines opening a ```swift block.
    static func swiftFenceCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let files = FileManager.default
        var candidates = ["README.md"]
        for folder in ["docs", "Sources"] {
            let base = repositoryRoot.appendingPathComponent(folder)
            for case let relative as String in files.enumerator(atPath: base.path) ?? NSEnumerator()
            where relative.hasSuffix(".md") && (folder == "docs" || relative.contains(".docc/")) {
                candidates.append("\(folder)/\(relative)")
            }
        }
        for path in candidates {
            let text = try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
            counts[path] = text.split(separator: "\n").filter {
                let line = $0.drop { $0 == " " }
                return line.hasPrefix("```swift") || line.hasPrefix("~~~swift")
            }.count
        }
        return counts
    }

    @Test func everySwiftBlockOfEveryDocumentIsExtracted() throws {
        let fences = try Self.swiftFenceCounts()
        let extracted = Dictionary(uniqueKeysWithValues: documentSnippets.map {
            ($0.path, $0.compiled + $0.skipped + $0.manifests.count)
        })
        #expect(extracted == fences)
        // The README's example and the library guide's are compiled, not skipped; the catalogue has
        // snippets of its own.
        let readme = try #require(documentSnippets.first { $0.path == "README.md" })
        #expect(readme.compiled >= 1)
        #expect(readme.skipped == 0)
        let library = try #require(documentSnippets.first { $0.path == "docs/LIBRARY.md" })
        #expect(library.compiled >= 8)
        #expect(library.skipped == 0)
        #expect(documentSnippets.contains { $0.path.contains(".docc/") && $0.compiled > 0 })
    }

    /// The README is the front door: its first Swift example comes within its first 50 lines.
    @Test func readmeShowsSwiftEarly() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let firstSwift = try #require(lines.firstIndex { $0.drop { $0 == " " }.hasPrefix("```swift") })
        #expect(firstSwift + 1 <= 50, "README.md's first ```swift block opens on line \(firstSwift + 1)")
    }

    /// Each `Package.swift` excerpt, completed into a manifest of a package named App, must evaluate
    /// (`swift package dump-package`, which loads the manifest without resolving anything) and declare a
    /// dependency on the library.
    @Test func manifestExcerptsAreValidManifests() throws {
        let excerpts = documentSnippets.flatMap { document in document.manifests.map { (document.path, $0) } }
        #expect(excerpts.count >= 2)
        let swift = try #require(Self.executable(named: "swift"))
        for (path, excerpt) in excerpts {
            let package = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-manifest-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: package) }
            let manifest = """
                // swift-tools-version:6.1
                import PackageDescription

                let package = Package(
                    name: "App",
                    platforms: [.macOS(.v15)],
                \(excerpt.text)
                )

                """
            try Data(manifest.utf8).write(to: package.appendingPathComponent("Package.swift"))
            let run = try ProgramRun.run(swift, ["package", "--package-path", package.path, "dump-package"])
            #expect(run.status == 0, "\(path):\(excerpt.line): \(run)")
            let dumped = try? JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
            let dependencies = dumped?["dependencies"] as? [Any] ?? []
            #expect(!dependencies.isEmpty, "\(path):\(excerpt.line) declares no package dependency")
        }
    }

    /// The first `name` on `PATH`.
    static func executable(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
