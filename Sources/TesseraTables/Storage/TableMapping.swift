@_spi(Internal) import TesseraImaging
import CTesseraGuard
import CTesseraFileLocks
import Foundation

/// One open and memory-mapped table file, and this participant's place among the processes that
/// share it.
///
/// The whole ``ImageFormat/maximumBytesOnDisk`` is mapped once with `MAP_SHARED`; the file itself
/// only grows (with `ftruncate`) as slots are used, and nothing ever touches a page beyond the
/// current file size. The descriptor's open file description holds two kinds of byte-range locks
/// (`CTesseraFileLocks`, far beyond any table's size): the **writers' lock**, held around every
/// change of the shared state (reserving a slot, committing, discarding), and this participant's
/// **slot lock** (one of ``participantLimit``), held as long as this object lives, which every
/// ``TableImage`` keeps alive through its lease: others read it to tell live participants from dead
/// ones. See ``ImageTable``, "Sharing between processes".
///
/// `@unchecked Sendable` is safe because every stored property is immutable after `init` (the
/// writer mutex is itself thread-safe); the mapped bytes themselves are shared memory whose access
/// the owning ``ImageTable`` coordinates (slot reservation under its locks, atomic commit words).
final class TableMapping: @unchecked Sendable {
    /// The file's path.
    let path: String
    /// The open descriptor (`O_RDWR | O_CLOEXEC | O_NOFOLLOW`), holding this participant's locks.
    let fd: Int32
    /// The start of the mapping.
    let base: UnsafeMutableRawPointer
    /// Bytes mapped (the format's maximum size).
    let length: Int
    /// What the participants share besides the file (``TableSharedRegion``).
    let shared: TableSharedRegion
    /// This participant's number (0..<``participantLimit``): its pin bit and its slot lock.
    let participant: Int
    /// Serialises this process's threads around the writers' lock, which belongs to the open file
    /// description and so does not exclude threads of one process from each other.
    private let writers = LockedValue(())
    /// This mapping's entry in the SIGBUS guard (`CTesseraGuard`), or -1 when unguarded.
    private let guardHandle: Int32

    /// Processes (or separately opened ``ImageTable``s) that can share one table file: one pin bit each.
    static let participantLimit = 64
    /// The writers' lock byte; participant *p*'s lock is the byte `writersLock + 1 + p`.
    static let writersLock: Int64 = 1 << 62

    private init(path: String, fd: Int32, base: UnsafeMutableRawPointer, length: Int, shared: TableSharedRegion, participant: Int) {
        self.path = path
        self.fd = fd
        self.base = base
        self.length = length
        self.shared = shared
        self.participant = participant
        self.guardHandle = tessera_guard_register(base, length)
    }

    deinit {
        tessera_guard_unregister(guardHandle)
        munmap(base, length)
        close(fd)   // the last descriptor of the description: the kernel releases its locks
    }

    // MARK: Locks

    /// Runs `body` holding the writers' lock: first this process's writer mutex, then the file lock,
    /// waiting for other processes' short critical sections (never for a store's drawing).
    func withWriters<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try writers.withLock { _ throws(E) -> T in
            _ = tessera_range_lock(fd, Self.writersLock, 1, 1, 1)
            defer { _ = tessera_range_unlock(fd, Self.writersLock, 1) }
            return try body()
        }
    }

    /// Releases the writers' lock that ``open(format:directory:)`` returns holding.
    func releaseWritersAfterOpen() { _ = tessera_range_unlock(fd, Self.writersLock, 1) }

    /// Whether participant `p` is alive: its slot lock is held (by this description when `p` is ours).
    func isAlive(_ p: Int) -> Bool {
        p == participant || tessera_range_is_held(fd, Self.writersLock + 1 + Int64(p), 1) != 0
    }

    /// Whether any other participant has the table open.
    var hasOtherParticipants: Bool {
        tessera_range_is_held(fd, Self.writersLock + 1, Int64(Self.participantLimit)) != 0
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

    /// Writes `count` bytes from `bytes` at file offset `offset` with `pwrite`, retrying short writes
    /// and `EINTR`. The page cache is the mapping's too, so the bytes are at `base + offset` when it
    /// returns, and no page of the mapping took a write fault for them.
    func write(_ bytes: UnsafeRawPointer, count: Int, at offset: Int) throws(TesseraError) {
        var done = 0
        while done < count {
            let written = pwrite(fd, bytes + done, count - done, off_t(offset + done))
            if written > 0 { done += written; continue }
            let code = written < 0 ? errno : EIO
            if code == EINTR { continue }
            throw TesseraError(.io(operation: "pwrite", path: path, errno: code))
        }
    }

    /// Writes the file header page with `pwrite` (used when creating or repairing the file).
    func writeHeader(_ format: ImageFormat) throws(TesseraError) {
        let page = TableFileHeader.encode(format)
        let written = page.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        guard written == page.count else { throw TesseraError(.io(operation: "pwrite", path: path, errno: errno)) }
    }

    /// Opens (creating if needed) `<directory>/<format.fileName>` as a new participant, discards the
    /// file if it describes another format and nobody else has it open, makes sure the header region
    /// exists, and maps it with its ``TableSharedRegion``. Returns holding the writers' lock, so that
    /// the caller reads the slot headers before anyone changes them: release it with
    /// ``releaseWritersAfterOpen()``.
    ///
    /// - Throws: ``/TesseraCore/StorageFailure/locked(path:)`` if other processes have the file open for
    ///   another format (or all ``participantLimit`` participant slots are taken), or `.io`.
    /// How often ``open(format:directory:)`` asks again before refusing a file that another participant
    /// uses for another format.
    static let refusalRetries = 6

    static func open(format: ImageFormat, directory: URL) throws(TesseraError) -> TableMapping {
        let dir = directory.path
        try makeDirectory(dir)
        let path = dir.hasSuffix("/") ? dir + format.fileName : dir + "/" + format.fileName
        let mode = mode_t(format.protection.mode)
        var refusals = 0
        for _ in 0..<8 {
            // O_NOFOLLOW: a table path replaced by a symlink fails with ELOOP instead of letting
            // the table truncate and overwrite whatever the link points to. O_NONBLOCK: a FIFO
            // planted at the path must not block the open (it is rejected below).
            let fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, mode)
            guard fd >= 0 else { throw TesseraError(.io(operation: "open", path: path, errno: errno)) }
            var mine = stat(), named = stat()
            guard fstat(fd, &mine) == 0 else {
                let code = errno
                close(fd)
                throw TesseraError(.io(operation: "fstat", path: path, errno: code))
            }
            guard mine.st_mode & S_IFMT == S_IFREG else {   // a directory, FIFO, socket or device
                close(fd)
                throw TesseraError(.io(operation: "open (not a regular file)", path: path, errno: EINVAL))
            }
            let code = tessera_range_lock(fd, writersLock, 1, 1, 1)
            guard code == 0 else {
                close(fd)
                throw TesseraError(.io(operation: "fcntl (lock)", path: path, errno: code))
            }
            // The path may have been unlinked or replaced between open and lock; then the lock
            // protects a file nobody else will find. Start over on the current file.
            guard fstat(fd, &mine) == 0, lstat(path, &named) == 0, mine.st_ino == named.st_ino, mine.st_dev == named.st_dev else {
                close(fd)   // releases the lock
                continue
            }
            let alone = tessera_range_is_held(fd, writersLock + 1, Int64(participantLimit)) == 0
            do {
                return try prepare(fd: fd, path: path, format: format, stat: mine, alone: alone, joining: nil)   // owns fd
            } catch let error where !alone && refusals < Self.refusalRetries && error.isLocked {
                // Another participant uses the file for another format. It may be one that just closed
                // it: a child another thread of this process is spawning holds a copy of every open file
                // description (and so its locks) until its exec closes them. Ask again a few times over
                // about 60 ms (1, 2, 4 … 32 ms) before refusing.
                usleep(useconds_t(1000 << refusals))
                refusals += 1
            }
        }
        throw TesseraError(.io(operation: "open (file keeps being replaced)", path: path, errno: EAGAIN))
    }

    /// A fresh mapping of `old`'s file through a duplicate of its descriptor (which shares its open
    /// file description, so its locks and participant slot), after `old` faulted because the file was
    /// truncated; the file is repaired as on open.
    static func remap(_ old: TableMapping, format: ImageFormat) throws(TesseraError) -> TableMapping {
        let fd = fcntl(old.fd, F_DUPFD_CLOEXEC, 0)   // close-on-exec, as the descriptor it duplicates
        guard fd >= 0 else { throw TesseraError(.io(operation: "dup", path: old.path, errno: errno)) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw TesseraError(.io(operation: "fstat", path: old.path, errno: code))
        }
        return try prepare(fd: fd, path: old.path, format: format, stat: st, alone: false, joining: old)   // owns fd now
    }

    /// Checks the header and maps `fd`, taking ownership of it: on failure the descriptor is closed
    /// exactly once — here before the mapping exists, by the mapping's `deinit` after. A new
    /// participant (`joining` nil) takes a free participant slot and clears what a dead holder of it
    /// left; a remap (`joining` the faulted mapping) keeps that mapping's slot and shared region.
    private static func prepare(fd: Int32, path: String, format: ImageFormat, stat st: stat, alone: Bool,
                                joining old: TableMapping?) throws(TesseraError) -> TableMapping {
        func fail(_ operation: String, _ code: Int32 = errno) -> TesseraError {
            let error = TesseraError(.io(operation: operation, path: path, errno: code))
            close(fd)
            return error
        }
        let size = Int(st.st_size)
        guard fchmod(fd, mode_t(format.protection.mode)) == 0 else { throw fail("fchmod") }
        var matches = false
        if size >= ImageFormat.pageSize {
            var page = [UInt8](repeating: 0, count: ImageFormat.pageSize)
            let n = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 { throw fail("pread") }
            matches = n == page.count && TableFileHeader.matches(page, format)
        }
        if !matches && size > 0 && !alone && old == nil {
            // Others use this file for another format (or a damaged header): never truncate it under them.
            close(fd)
            throw TesseraError(.storage(.locked(path: path)))
        }
        let shared: TableSharedRegion, participant: Int
        if let old {
            (shared, participant) = (old.shared, old.participant)
        } else {
            do {
                shared = try TableSharedRegion.open(tablePath: path, table: st, maximumCount: format.maximumCount,
                                                    mode: mode_t(format.protection.mode), alone: alone)
            } catch {
                close(fd)
                throw error
            }
            guard let free = (0..<participantLimit).first(where: { tessera_range_lock(fd, writersLock + 1 + Int64($0), 1, 1, 0) == 0 }) else {
                close(fd)
                throw TesseraError(.storage(.locked(path: path)))
            }
            participant = free
            if !alone {
                let slots = size >= format.headerBytes ? min(format.maximumCount, (size - format.headerBytes) / format.bytesPerEntry) : 0
                shared.clearLeftovers(of: participant, slots: slots)
            }
        }
        let length = format.maximumBytesOnDisk
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), base != MAP_FAILED else {
            throw fail("mmap")
        }
        let mapping = TableMapping(path: path, fd: fd, base: base, length: length, shared: shared, participant: participant)
        if !matches {
            // A new file, or one written for another format: never serve its pixels. Truncating to
            // zero (rather than unlink + recreate) keeps the inode the others and the locks are on.
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

extension TesseraError {
    /// Whether this is ``/TesseraCore/StorageFailure/locked(path:)``.
    fileprivate var isLocked: Bool {
        if case .storage(.locked) = reason { return true }
        return false
    }
}
