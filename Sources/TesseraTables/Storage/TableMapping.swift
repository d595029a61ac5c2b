import TesseraImaging
import CTesseraGuard
import Foundation

/// One open, locked and memory-mapped table file.
///
/// The whole ``ImageFormat/maximumBytesOnDisk`` is mapped once with `MAP_SHARED`; the file itself
/// only grows (with `ftruncate`) as slots are used, and nothing ever touches a page beyond the
/// current file size. The descriptor holds the table's `flock`; both the mapping and the lock live
/// as long as this object, which every ``TableImage`` keeps alive through its lease.
///
/// `@unchecked Sendable` is safe because every stored property is immutable after `init`; the
/// mapped bytes themselves are shared memory whose access the owning ``ImageTable`` coordinates
/// (slot reservation under its mutex, atomic commit words).
final class TableMapping: @unchecked Sendable {
    /// The file's path.
    let path: String
    /// The open descriptor (`O_RDWR | O_CLOEXEC | O_NOFOLLOW`), holding `flock(LOCK_EX)`.
    let fd: Int32
    /// The start of the mapping.
    let base: UnsafeMutableRawPointer
    /// Bytes mapped (the format's maximum size).
    let length: Int
    /// This mapping's entry in the SIGBUS guard (`CTesseraGuard`), or -1 when unguarded.
    private let guardHandle: Int32

    private init(path: String, fd: Int32, base: UnsafeMutableRawPointer, length: Int) {
        self.path = path
        self.fd = fd
        self.base = base
        self.length = length
        self.guardHandle = tessera_guard_register(base, length)
    }

    deinit {
        tessera_guard_unregister(guardHandle)
        munmap(base, length)
        close(fd)
    }

    /// Whether an access hit a page the file no longer covers (someone truncated it): the guard
    /// replaced that page with zeros. The mapping can no longer be trusted; the table abandons it.
    var faulted: Bool { tessera_guard_faults(guardHandle) > 0 }

    /// File facts from `fstat`: size, allocated bytes and the link count (0 once unlinked).
    struct FileState {
        var size: Int
        var allocatedBytes: Int
        var links: Int
    }

    /// `fstat` of the descriptor; `nil` if it fails (treated as "table gone").
    func fileState() -> FileState? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        return FileState(size: Int(st.st_size), allocatedBytes: Int(st.st_blocks) * 512, links: Int(st.st_nlink))
    }

    /// Sets the file's size.
    func setSize(_ size: Int) throws(TesseraError) {
        var result: Int32
        repeat { result = ftruncate(fd, off_t(size)) } while result != 0 && errno == EINTR
        guard result == 0 else { throw TesseraError(.io(operation: "ftruncate", path: path, errno: errno)) }
    }

    /// Makes sure the file has disk blocks for `length` bytes at `offset` (`posix_fallocate`), growing
    /// it if needed. Pages of the mapping are only ever written after this succeeded for them: on a
    /// full disk a write into a hole of a shared mapping raises `SIGBUS`, whereas this returns
    /// `ENOSPC` (or `EFBIG` past `RLIMIT_FSIZE`) as a typed error. Cheap when the blocks exist.
    ///
    /// Elsewhere than Linux (no `posix_fallocate`) the file is only extended with `ftruncate`; a full
    /// disk then shows as `SIGBUS` on the page written, which the guard (`CTesseraGuard`) absorbs and
    /// the table reports as damage instead of a typed `ENOSPC`.
    func allocate(offset: Int, length: Int) throws(TesseraError) {
        #if !os(Linux)
        if let st = fileState(), st.size < offset + length { try setSize(offset + length) }
        return
        #else
        var code: Int32
        repeat { code = posix_fallocate(fd, off_t(offset), off_t(length)) } while code == EINTR
        if code == 0 { return }
        if code == EOPNOTSUPP || code == EINVAL {
            // No fallocate on this file system (glibc's emulation failed too): extend as before.
            if let st = fileState(), st.size < offset + length { try setSize(offset + length) }
            return
        }
        throw TesseraError(.io(operation: "fallocate", path: path, errno: code))
        #endif
    }

    /// Gives `slot`'s header and pixels disk blocks (``allocate(offset:length:)``).
    func allocateSlot(_ slot: Int, format: ImageFormat) throws(TesseraError) {
        try allocate(offset: ImageFormat.pageSize + slot * ImageFormat.slotHeaderSize, length: ImageFormat.slotHeaderSize)
        try allocate(offset: format.headerBytes + slot * format.bytesPerEntry, length: format.bytesPerEntry)
    }

    /// Readies a slot reserved by a writer, outside the table's lock: disk blocks for its header and
    /// pixels, then its commit word stored as 0 (atomic, with a full fence) before any pixel is
    /// written. Only the reserving writer touches the slot meanwhile.
    func prepareSlot(_ slot: Int, format: ImageFormat) throws(TesseraError) {
        try allocateSlot(slot, format: format)
        SlotHeader(pointer: base + ImageFormat.pageSize + slot * ImageFormat.slotHeaderSize, slot: slot).invalidate()
    }

    /// Writes the file header page with `pwrite` (used when creating or repairing the file).
    func writeHeader(_ format: ImageFormat) throws(TesseraError) {
        let page = TableFileHeader.encode(format)
        let written = page.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == page.count else { throw TesseraError(.io(operation: "pwrite", path: path, errno: errno)) }
    }

    /// Opens (creating if needed) and locks `<directory>/<format.fileName>`, discards it if it
    /// describes another format, makes sure the header region exists, and maps it.
    ///
    /// - Throws: ``/TesseraCore/StorageFailure/alreadyOpenInThisProcess(path:)`` if this process holds the lock,
    ///   ``/TesseraCore/StorageFailure/locked(path:)`` if another process does, or `.io`.
    /// `flock(fd, LOCK_EX | LOCK_NB)`, tried again for up to 200 ms while it fails with `EWOULDBLOCK`:
    /// a process this one has just forked holds every open file description it inherited, locks
    /// included, until it execs (`O_CLOEXEC` closes them then), which takes microseconds to a few
    /// milliseconds. A table that another process really holds still fails, 200 ms later.
    static func lockBriefly(_ fd: Int32) -> Int32 {
        for _ in 0..<40 {
            let result = flock(fd, LOCK_EX | LOCK_NB)
            guard result != 0, errno == EWOULDBLOCK else { return result }
            usleep(5_000)
        }
        return flock(fd, LOCK_EX | LOCK_NB)
    }

    static func open(format: ImageFormat, directory: URL) throws(TesseraError) -> TableMapping {
        let dir = directory.path
        try makeDirectory(dir)
        let path = dir.hasSuffix("/") ? dir + format.fileName : dir + "/" + format.fileName
        let mode = mode_t(format.protection.mode)
        for _ in 0..<8 {
            // O_NOFOLLOW: a table path replaced by a symlink fails with ELOOP instead of letting
            // the table truncate and overwrite whatever the link points to. O_NONBLOCK: a FIFO
            // planted at the path must not block the open (it is rejected below).
            let fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode)
            guard fd >= 0 else { throw TesseraError(.io(operation: "open", path: path, errno: errno)) }
            if Self.lockBriefly(fd) != 0 {
                let code = errno
                let ours = code == EWOULDBLOCK && isOpenByAnotherDescriptor(fd)
                close(fd)
                if ours { throw TesseraError(.storage(.alreadyOpenInThisProcess(path: path))) }
                if code == EWOULDBLOCK { throw TesseraError(.storage(.locked(path: path))) }
                throw TesseraError(.io(operation: "flock", path: path, errno: code))
            }
            // The path may have been unlinked or replaced between open and flock; then the lock
            // protects a file nobody else will find. Start over on the current file.
            var mine = stat(), named = stat()
            guard fstat(fd, &mine) == 0, lstat(path, &named) == 0, mine.st_ino == named.st_ino, mine.st_dev == named.st_dev else {
                close(fd)
                continue
            }
            guard mine.st_mode & S_IFMT == S_IFREG else {   // a directory, FIFO, socket or device
                close(fd)
                throw TesseraError(.io(operation: "open (not a regular file)", path: path, errno: EINVAL))
            }
            return try prepare(fd: fd, path: path, format: format, size: Int(mine.st_size))
        }
        throw TesseraError(.io(operation: "open (file keeps being replaced)", path: path, errno: EAGAIN))
    }

    /// The directory listing this process's open descriptors.
    #if os(Linux)
    private static let descriptorDirectory = "/proc/self/fd"
    #else
    private static let descriptorDirectory = "/dev/fd"
    #endif

    /// Whether another descriptor of this process refers to `fd`'s file (then the `flock` that
    /// refused `fd` is held here: only tables open these files). Lists the process's descriptors
    /// (`/proc/self/fd` on Linux, `/dev/fd` elsewhere); used on the error path only.
    private static func isOpenByAnotherDescriptor(_ fd: Int32) -> Bool {
        var mine = stat()
        guard fstat(fd, &mine) == 0,
              let names = try? FileManager.default.contentsOfDirectory(atPath: Self.descriptorDirectory) else { return false }
        for name in names {
            guard let other = Int32(name), other != fd else { continue }
            var st = stat()
            if fstat(other, &st) == 0, st.st_dev == mine.st_dev, st.st_ino == mine.st_ino { return true }
        }
        return false
    }

    /// A fresh mapping of `old`'s file through a duplicate of its descriptor (which shares the
    /// `flock`), after `old` faulted because the file was truncated; the file is repaired as on open.
    static func remap(_ old: TableMapping, format: ImageFormat) throws(TesseraError) -> TableMapping {
        let fd = dup(old.fd)
        guard fd >= 0 else { throw TesseraError(.io(operation: "dup", path: old.path, errno: errno)) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw TesseraError(.io(operation: "fstat", path: old.path, errno: code))
        }
        return try prepare(fd: fd, path: old.path, format: format, size: Int(st.st_size))   // owns fd now
    }

    /// Checks the header and maps `fd`, taking ownership of it: on failure the descriptor is closed
    /// exactly once — here before the mapping exists, by the mapping's `deinit` after.
    private static func prepare(fd: Int32, path: String, format: ImageFormat, size: Int) throws(TesseraError) -> TableMapping {
        func fail(_ operation: String) -> TesseraError {
            let error = TesseraError(.io(operation: operation, path: path, errno: errno))
            close(fd)
            return error
        }
        guard fchmod(fd, mode_t(format.protection.mode)) == 0 else { throw fail("fchmod") }
        var matches = false
        if size >= ImageFormat.pageSize {
            var page = [UInt8](repeating: 0, count: ImageFormat.pageSize)
            let n = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { throw fail("pread") }
            matches = n == page.count && TableFileHeader.matches(page, format)
        }
        let length = format.maximumBytesOnDisk
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), base != MAP_FAILED else {
            throw fail("mmap")
        }
        let mapping = TableMapping(path: path, fd: fd, base: base, length: length)
        if !matches {
            // A new file, or one written for another format: never serve its pixels. Truncating to
            // zero (rather than unlink + recreate) keeps the inode we hold the lock on.
            try mapping.setSize(0)
            try mapping.setSize(format.headerBytes)
            try mapping.writeHeader(format)
        } else if size < format.headerBytes {
            try mapping.setSize(format.headerBytes)   // zero-filled slot headers are free slots
        }
        return mapping
    }

    private static func makeDirectory(_ path: String) throws(TesseraError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue { return }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            // The global errno is stale by now (often 0, hence a bogus EIO): take the one FileManager wraps.
            throw TesseraError(.io(operation: "mkdir", path: path, errno: TesseraError.posixCode(of: error)))
        }
    }
}
