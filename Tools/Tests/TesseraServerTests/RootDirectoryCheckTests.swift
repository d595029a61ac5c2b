import Foundation
import Testing
@testable import TesseraServer
import TesseraTestSupport

/// A hit without a check interval asks only whether its file is unchanged (one `stat`,
/// `File.isUnchangedNow()`); that answer must agree with a full check of the path (`RootDirectory.file`)
/// after every kind of change a file can go through.
@Suite("root directory: the check a hit makes")
struct RootDirectoryCheckTests {
    /// One change to `photo.jpg` (or the path that names it) after it was checked.
    struct Change: CustomStringConvertible, Sendable {
        let description: String
        /// Whether the file keeps its version (device, inode, size and modification time).
        var keepsVersion = false
        let apply: @Sendable (_ root: URL) throws -> Void
    }

    static let modified = Date(timeIntervalSince1970: 1_700_000_000)

    static let changes: [Change] = [
        Change(description: "none", keepsVersion: true) { _ in },
        Change(description: "the same bytes written again in place, the modification time kept", keepsVersion: true) { root in
            let file = root.appendingPathComponent("photo.jpg")
            let bytes = try Data(contentsOf: file)
            let handle = try FileHandle(forWritingTo: file)
            try handle.write(contentsOf: bytes)
            try handle.close()
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
        },
        Change(description: "the same size, another modification time") { root in
            try FileManager.default.setAttributes([.modificationDate: modified.addingTimeInterval(1)],
                                                  ofItemAtPath: root.appendingPathComponent("photo.jpg").path)
        },
        Change(description: "another size, the modification time kept") { root in
            let file = root.appendingPathComponent("photo.jpg")
            try ServeFixture.jpeg(width: 40, height: 30).write(to: file)
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
        },
        Change(description: "replaced by a copy (another inode, same size and time)") { root in
            let file = root.appendingPathComponent("photo.jpg"), copy = root.appendingPathComponent("copy.jpg")
            try FileManager.default.copyItem(at: file, to: copy)
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: copy.path)
            #expect(rename(copy.path, file.path) == 0)
        },
        Change(description: "moved, a symlink left in its place (the same file)", keepsVersion: true) { root in
            let file = root.appendingPathComponent("photo.jpg"), moved = root.appendingPathComponent("moved.jpg")
            try FileManager.default.moveItem(at: file, to: moved)
            try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "moved.jpg")
        },
        Change(description: "removed") { root in
            try FileManager.default.removeItem(at: root.appendingPathComponent("photo.jpg"))
        },
        Change(description: "replaced by a directory") { root in
            let file = root.appendingPathComponent("photo.jpg")
            try FileManager.default.removeItem(at: file)
            try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        },
    ]

    @Test(arguments: changes)
    func theQuickCheckAgreesWithAFullOne(_ change: Change) throws {
        let fixture = try ServeFixture()
        let file = fixture.root.appendingPathComponent("photo.jpg")
        try ServeFixture.jpeg(width: 64, height: 48).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Self.modified], ofItemAtPath: file.path)
        let directory = try RootDirectory(fixture.root.path, recheckSeconds: 0)
        let checked = try directory.file("photo.jpg")
        #expect(checked.isUnchangedNow())

        try change.apply(fixture.root)
        let full = try? directory.file("photo.jpg")
        let unchanged = full.map { $0.version == checked.version } ?? false
        #expect(checked.isUnchangedNow() == unchanged)
        #expect(unchanged == change.keepsVersion)
    }
}
