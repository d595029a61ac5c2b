import Foundation
import PackagePlugin

/// Generates the `TesseraSnippetTests` sources from the documentation on every build: the README,
/// docs/*.md and the DocC articles (`Sources/*/*.docc`), through `TesseraSnippetExtractor`. Generated
/// rather than committed, the compiled snippets can never be stale: editing a ```swift block of a
/// document rebuilds them, and a block that no longer compiles fails the build at the document's line.
@main
struct DocumentationSnippets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        // The tools package lives in Tools/; the documents are the library's, one level up.
        let root = context.package.directoryURL.deletingLastPathComponent()
        let documents = Self.documents(under: root)
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("DocumentationSnippets.swift")
        // The snippets marked `file=vapor`, in a file of their own (TesseraSnippetExtractor's header).
        let vapor = context.pluginWorkDirectoryURL.appendingPathComponent("DocumentationSnippets-vapor.swift")
        return [
            .buildCommand(
                displayName: "Extracting the Swift snippets of \(documents.count) documents",
                executable: try context.tool(named: "TesseraSnippetExtractor").url,
                arguments: [root.path, output.path] + documents,
                inputFiles: documents.map { root.appendingPathComponent($0) },
                outputFiles: [output, vapor]
            ),
        ]
    }

    /// The Markdown files whose snippets are compiled, relative to `root`: README.md, docs/*.md and every
    /// `.md` inside a `.docc` catalogue of a library target (`Sources/NAME/NAME.docc`), sorted.
    static func documents(under root: URL) -> [String] {
        let files = FileManager.default
        var found = ["README.md"]
        let markdown = { (folder: String) -> [String] in
            ((try? files.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? [])
                .filter { $0.hasSuffix(".md") }.map { "\(folder)/\($0)" }
        }
        found += markdown("docs")
        for target in (try? files.contentsOfDirectory(atPath: root.appendingPathComponent("Sources").path)) ?? [] {
            let targetFolder = "Sources/\(target)"
            for catalog in (try? files.contentsOfDirectory(atPath: root.appendingPathComponent(targetFolder).path)) ?? []
            where catalog.hasSuffix(".docc") {
                found += markdown("\(targetFolder)/\(catalog)")
            }
        }
        return found.sorted()
    }
}
