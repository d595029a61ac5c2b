import Foundation
import Testing
import TesseraTestSupport

/// What a program started through ``ChildProcess`` inherits: the tests start servers, browsers and
/// stress children side by side, and a descriptor one of them inherits by accident can hold another
/// test's pipe open after that test's own child has exited.
@Suite("ChildProcess: descriptors")
struct ChildProcessTests {
    /// The descriptor numbers `/bin/ls /proc/self/fd` lists in a child given `descriptors`.
    static func childDescriptors(_ descriptors: [Int32: Int32] = [:]) async throws -> Set<Int32> {
        let pipe = try ChildProcess.makePipe()
        let child = try ChildProcess.spawn("/bin/ls", ["/proc/self/fd"], environment: [:], standardOutput: pipe.write,
                                           standardError: STDERR_FILENO, descriptors: descriptors)
        close(pipe.write)
        let output = FileHandle(fileDescriptor: pipe.read, closeOnDealloc: true).readDataToEndOfFile()
        #expect(await child.wait().status == 0)
        return Set(String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) })
    }

    @Test func aChildGetsOnlyItsStandardDescriptorsAndTheOnesItWasGiven() async throws {
        // A pipe that is not close-on-exec, as a library might open one.
        var leaked: [Int32] = [0, 0]
        try #require(pipe(&leaked) == 0)
        defer { for end in leaked { close(end) } }
        let plain = try await Self.childDescriptors()
        #expect(plain.isSuperset(of: [0, 1, 2]))
        #expect(plain.isDisjoint(with: leaked), "\(plain) holds none of \(leaked)")
        // `ls` opens one directory of its own: at most one more than the standard three.
        #expect(plain.count <= 4, "\(plain.sorted())")
        let given = try await Self.childDescriptors([3: leaked[0]])
        #expect(given.isSuperset(of: [0, 1, 2, 3]))
        #expect(given.isDisjoint(with: leaked.filter { $0 != 3 }), "\(given) holds only its copy on 3")
        #expect(given.count <= 5, "\(given.sorted())")
    }

    @Test func pipesAreCloseOnExec() throws {
        let pipe = try ChildProcess.makePipe()
        defer { close(pipe.read); close(pipe.write) }
        #expect(fcntl(pipe.read, F_GETFD) & FD_CLOEXEC != 0)
        #expect(fcntl(pipe.write, F_GETFD) & FD_CLOEXEC != 0)
    }
}
