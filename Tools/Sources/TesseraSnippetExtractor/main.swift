// Turns every ```swift block of the documentation into Swift that the `TesseraSnippetTests` target
// compiles, so that an example in the README, docs/*.md or the DocC articles cannot rot. Run by the
// `DocumentationSnippets` build-tool plugin on every build (never committed, so never stale):
//
//     TesseraSnippetExtractor ROOT OUTPUT.swift DOCUMENT.md…     (documents relative to ROOT)
//
// Each block becomes one kind of output (the conventions are in docs/DEVELOPMENT.md, "Documentation"):
// - a compiled snippet: its own `async throws` function, so names never clash between blocks, with
//   `#sourceLocation` pointing back at the Markdown file, so a compile error names README.md:LINE.
//   Its `import` lines move to the top of the file (imports are file-level); anything a snippet uses
//   but does not define (the app's `data`, `show(_:)`…) comes from the test target's SnippetContext.swift;
// - a manifest excerpt (first line `// Package.swift`): kept as text, which a test completes into a
//   `Package.swift` and evaluates with `swift package dump-package`;
// - a block whose info string says `no-compile` (```swift no-compile): only counted;
// - a block whose info string says `file=vapor`: a compiled snippet in the second output file,
//   OUTPUT-vapor.swift, with imports of its own. Vapor's `Application`, `Request` and `Response` share
//   their names with Hummingbird's, which the other snippets use unqualified: one file cannot import both.
import Foundation

/// One fenced ```swift block of a Markdown file.
struct Block {
    /// 1-based line of the opening fence.
    var fenceLine: Int
    /// The words after `swift` in the info string (`no-compile`).
    var attributes: [String]
    /// The block's lines, with the fence's indentation removed.
    var lines: [String]
}

/// Finds the fenced code blocks in `text` whose language is `swift`: a fence is three or more backticks
/// (or tildes), closed by a fence of the same character at least as long (CommonMark).
func swiftBlocks(in text: String) -> [Block] {
    var blocks: [Block] = []
    var open: (fence: String, indent: Int, block: Block?)?
    for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = String(line)
        let indent = line.prefix { $0 == " " }.count
        let trimmed = line.dropFirst(indent)
        if var current = open {
            let closing = trimmed.trimmingCharacters(in: .whitespaces)
            if indent < 4, closing.count >= current.fence.count,
               closing.allSatisfy({ $0 == current.fence.first }) {
                if let block = current.block { blocks.append(block) }
                open = nil
            } else {
                current.block?.lines.append(String(line.dropFirst(min(indent, current.indent))))
                open = current
            }
            continue
        }
        guard indent < 4, let marker = trimmed.first, marker == "`" || marker == "~" else { continue }
        let fence = String(trimmed.prefix { $0 == marker })
        guard fence.count >= 3 else { continue }
        let info = trimmed.dropFirst(fence.count).split(separator: " ").map(String.init)
        let block = info.first == "swift"
            ? Block(fenceLine: index + 1, attributes: Array(info.dropFirst()), lines: []) : nil
        open = (fence, indent, block)
    }
    return blocks
}

/// Whether a line is a file-level import (`import X`, `@testable import X`, `@_spi(Y) import X`).
func isImport(_ line: String) -> Bool {
    let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
    return words.first == "import" || (words.first?.hasPrefix("@") == true && words.dropFirst().first == "import")
}

/// A Swift identifier made of the document path and line (`README.md`, 95 → `README_md_95`).
func identifier(_ path: String, _ line: Int) -> String {
    String(path.map { $0.isLetter || $0.isNumber ? $0 : "_" }) + "_\(line)"
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write(Data("usage: TesseraSnippetExtractor ROOT OUTPUT.swift DOCUMENT.md…\n".utf8))
    exit(2)
}
let root = URL(fileURLWithPath: arguments[1])
/// One generated Swift file: its imports and its snippet functions.
struct OutputFile {
    var imports: Set<String> = ["import Foundation"]
    var functions: [String] = []
}
/// The files a block's `file=NAME` may name, besides the main output ("").
let separateFiles = ["vapor"]
var files: [String: OutputFile] = ["": OutputFile()]
for name in separateFiles { files[name] = OutputFile() }
var catalogue: [String] = []
for document in arguments.dropFirst(3) {
    let path = root.appendingPathComponent(document).path
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        FileHandle.standardError.write(Data("\(path): cannot read\n".utf8))
        exit(1)
    }
    var compiled = 0, skipped = 0
    var manifests: [String] = []
    for block in swiftBlocks(in: text) {
        let firstLine = block.lines.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }?
            .trimmingCharacters(in: .whitespaces)
        if block.attributes.contains("no-compile") {
            skipped += 1
        } else if firstLine == "// Package.swift" {
            let body = block.lines.joined(separator: "\n")
            manifests.append("ManifestExcerpt(line: \(block.fenceLine), text: ##\"\"\"\n\(body)\n\"\"\"##)")
        } else {
            compiled += 1
            let file = block.attributes.first { $0.hasPrefix("file=") }.map { String($0.dropFirst("file=".count)) } ?? ""
            guard files[file] != nil else {
                FileHandle.standardError.write(Data("\(path):\(block.fenceLine): no generated file '\(file)' (known: \(separateFiles))\n".utf8))
                exit(1)
            }
            // Imports move to the file's top; an empty line keeps the lines after it where they were.
            let body = block.lines.map { line -> String in
                guard isImport(line) else { return "    " + line }
                let code = line.components(separatedBy: "//")[0]       // `import Foundation   // Data, URL`
                files[file]?.imports.insert(code.trimmingCharacters(in: .whitespaces))
                return ""
            }
            files[file]?.functions.append("""
                // \(document):\(block.fenceLine)
                func snippet_\(identifier(document, block.fenceLine))() async throws {
                #sourceLocation(file: "\(path)", line: \(block.fenceLine + 1))
                \(body.joined(separator: "\n"))
                #sourceLocation()
                }
                """)
        }
    }
    catalogue.append("""
            DocumentSnippets(path: "\(document)", compiled: \(compiled), skipped: \(skipped), manifests: [
        \(manifests.map { $0 + "," }.joined(separator: "\n"))
            ]),
        """)
}
/// The Swift text of `file`, with `trailer` after its functions.
func source(of file: OutputFile, trailer: String = "") -> String {
    """
    // Generated by TesseraSnippetExtractor (the DocumentationSnippets plugin) from the documentation; do not edit.
    \(file.imports.sorted().joined(separator: "\n"))

    \(file.functions.joined(separator: "\n\n"))
    \(trailer)
    """
}
let main = source(of: files[""]!, trailer: """

    /// What the extractor found in each document, for `SnippetCoverageTests`.
    let documentSnippets: [DocumentSnippets] = [
    \(catalogue.joined(separator: "\n"))
    ]

    """)
var outputs = [(arguments[2], main)]
for name in separateFiles {
    outputs.append((String(arguments[2].dropLast(".swift".count)) + "-\(name).swift", source(of: files[name]!)))
}
for (path, text) in outputs {
    do {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    } catch {
        FileHandle.standardError.write(Data("\(path): \(error)\n".utf8))
        exit(1)
    }
}
