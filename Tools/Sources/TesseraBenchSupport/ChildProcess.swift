import Foundation
@_spi(Internal) import TesseraCore

/// Starts programs with `posix_spawn` and waits for them with `waitpid`.
///
/// Not Foundation's `Process.waitUntilExit()`: its run-loop based exit notification can hang when several
/// tests wait for children at once; `waitpid` on the child's own pid cannot miss the exit. From async code
/// the wait runs on a thread of its own (``onOwnThread(_:)``): a child may need the test process (an
/// in-process origin, another test's progress), so a wait must never hold one of Swift's pool threads.
public struct ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t

    /// How a child ended.
    public struct Exit: Sendable {
        /// The exit status, or -1 when a signal ended the child.
        public var status: Int32
        /// The signal that ended the child (a crash or a kill), if one did.
        public var signal: Int32?
    }

    /// `posix_spawn` failed.
    public struct SpawnError: Error, CustomStringConvertible {
        /// The program.
        public var path: String
        /// The error number.
        public var code: Int32
        /// The program and the reason.
        public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    /// Starts `path` with `arguments`, `environment` (the whole environment), standard input from
    /// /dev/null and standard output and error into the given descriptors. `descriptors` maps more of the
    /// child's descriptor numbers to this process's descriptors (such as Chromium's DevTools pipe on 3
    /// and 4); this process's numbers must not be among the child's numbers (duplicate them higher first).
    /// Open every descriptor given here close-on-exec (`O_CLOEXEC`, ``makePipe()``, `SOCK_CLOEXEC`): the child
    /// still gets its copies (`dup2` clears the flag), but no other program that a test starts at the same
    /// time inherits one, which would hold a pipe open after its own child has exited.
    /// With `newProcessGroup` the child leads a process group of its own (its id is the child's pid), so
    /// that ``signalGroup(_:)`` reaches the processes it forks too (thumbor's workers, nginx's).
    public static func spawn(_ path: String, _ arguments: [String], environment: [String: String],
                      standardOutput: Int32, standardError: Int32, descriptors: [Int32: Int32] = [:],
                      newProcessGroup: Bool = false) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        for (child, parent) in descriptors.sorted(by: { $0.key < $1.key }) { posix_spawn_file_actions_adddup2(&actions, parent, child) }
        // Then every other descriptor is closed in the child, whatever its flags: the child gets only what it was given.
        if let addCloseFrom = Self.addCloseFrom { _ = addCloseFrom(&actions, (descriptors.keys.max() ?? 2) + 1) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        // The calling thread (a Swift concurrency worker) blocks most signals, and a spawned child would
        // inherit that mask: nginx would ignore SIGTERM and bash would never see SIGCHLD. Start clean.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (newProcessGroup ? POSIX_SPAWN_SETPGROUP : 0)))
        var pid: pid_t = 0
        let code = descriptorCreation.withLock { _ in posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
        guard code == 0 else { throw SpawnError(path: path, code: code) }
        return ChildProcess(pid: pid)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; not in Swift's Glibc module,
    /// so looked up by name), or `nil` where the C library has none.
    private static let addCloseFrom: AddCloseFrom? =
        dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map { unsafeBitCast($0, to: AddCloseFrom.self) }
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Held while a pipe is made and flagged close-on-exec, and while a child is spawned, so that no child
    /// inherits a pipe in between (Swift's Glibc module has no `pipe2`).
    private static let descriptorCreation = LockedValue(())

    /// A pipe whose two ends are close-on-exec: give one end to ``spawn(_:_:environment:standardOutput:standardError:descriptors:newProcessGroup:)``
    /// and only that child gets a copy.
    public static func makePipe() throws -> (read: Int32, write: Int32) {
        try descriptorCreation.withLock { _ in
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            return (ends[0], ends[1])
        }
    }

    /// Sends `signal` to every process of the child's process group (see `newProcessGroup`).
    public func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// The pids of the child's process group that are alive now (the child and what it forked).
    public func groupMembers() -> [pid_t] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return names.compactMap { name -> pid_t? in
            guard let member = pid_t(name),
                  let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            // After "(comm)": state, ppid, pgrp.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && pid_t(fields[2]) == pid ? member : nil
        }
    }

    /// Suspends until the child has exited and reaps it, waiting on a thread of its own.
    public func wait() async -> Exit {
        await onOwnThread { self.wait() }
    }

    /// Blocks until the child has exited and reaps it.
    public func wait() -> Exit {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        if signal != 0 { return Exit(status: -1, signal: signal) }
        return Exit(status: (status >> 8) & 0xFF, signal: nil)
    }
}
