@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation
import Logging

/// The default ``DiskCaching``: one file per URL (see `DiskCacheFile` for the format), an in-memory
/// index, size and age limits, statistics.
///
/// - **Index.** Built once by `init` from `stat` of each file (no file is read), in the library's one
///   `LRUMap` (an entry costs its file's bytes; least recently accessed first, by the files' access
///   times, then by use); afterwards ``contains(_:)`` and ``statistics`` never touch the disk, and never
///   wait behind a call that does: file changes take a lock of their own (the directory's), which holds
///   the index's only for the in-memory change that goes with them.
/// - **Limits.** After every ``store(_:info:for:)`` and on every ``sweep()``: entries older than
///   ``Configuration/ageLimit`` (since downloaded or last revalidated) are removed, then the least
///   recently accessed entries until the total is within ``Configuration/sizeLimit``. A body larger than
///   the whole size limit is not stored. ``startSweeping(every:)`` runs ``sweep()`` periodically.
/// - **Atomicity.** Writes go to a temporary file renamed into place; leftovers of a crash are deleted by
///   `init`. Every change to the directory's entries (the rename of a store, each removal) is made under
///   the index's lock together with the index change, so the index and the files always name the same
///   entries, whatever runs at the same time. An unreadable or foreign file is removed on read and
///   reported as a miss. Files are read
///   without following symbolic links or blocking on FIFOs, and only regular files are indexed.
/// - **Errors.** A failed write (disk full, `RLIMIT_FSIZE`, permissions) throws ``/TesseraCore/TesseraError`` `.io`
///   with its errno and leaves the previous entry and every other one as they were.
/// - **Clock.** `now` is injected so that tests can age entries without waiting.
public final class DiskCache: DiskCaching {
    /// Where and how much.
    public struct Configuration: Sendable, Hashable {
        /// The cache directory (created when missing).
        public var directory: URL
        /// Largest total size of the files, in bytes.
        public var sizeLimit: Int
        /// Largest age of an entry, or `nil` for none.
        public var ageLimit: Duration?

        /// Creates a configuration: by default 512 MiB and 30 days.
        public init(directory: URL, sizeLimit: Int = 512 << 20, ageLimit: Duration? = .seconds(30 * 24 * 3600)) {
            self.directory = directory
            self.sizeLimit = sizeLimit
            self.ageLimit = ageLimit
        }
    }

    /// The sizes and counters (``DiskCacheStatistics``).
    public typealias Statistics = DiskCacheStatistics

    struct IndexEntry: Sendable {
        var size: Int
        var storedAt: Date
    }

    private struct State {
        var configuration: Configuration
        /// Entries by file name, least recently accessed first, each costing its file's bytes.
        var index = LRUMap<String, IndexEntry>()
        var hits = 0
        var misses = 0
        var evictions = 0
        var sweeper: Task<Void, Never>?

        /// Indexes `name` as the most recently accessed entry.
        mutating func put(_ name: String, _ entry: IndexEntry) { index.insert(name, value: entry, cost: entry.size) }

        @discardableResult
        mutating func drop(_ name: String) -> Bool { index.remove(name) != nil }

        /// Removes from the index what the limits exclude (sparing `keep`, the entry just stored, which is
        /// the most recently used and alone within the size limit) and returns the names to unlink.
        mutating func victims(now: Date, keep: String?) -> [String] {
            var names: [String] = []
            if let ageLimit = configuration.ageLimit {
                index.forEach { node in
                    if node.key != keep, now.timeIntervalSince(node.value.storedAt) > ageLimit.timeInterval { names.append(node.key) }
                }
                for name in names { drop(name) }
            }
            while index.totalCost > configuration.sizeLimit, let oldest = index.oldestKey, oldest != keep {
                drop(oldest)
                names.append(oldest)
            }
            evictions += names.count
            return names
        }
    }

    /// The directory path.
    public let path: String
    /// The index and counters: held only for in-memory work.
    private let state: LockedValue<State>
    /// Held across every change to the directory's entries (a rename into place, an unlink) together
    /// with the index change that goes with it; taken before ``state``, never inside it.
    private let directory = LockedValue(())
    private let now: @Sendable () -> Date
    /// Receives evictions (debug) and files that do not parse, removed on read (warning).
    private let logger: Logger

    /// Opens (creating when missing) the cache directory and builds the index from the files' metadata.
    /// `logger` receives evictions (debug); ``ImageManager`` passes its configuration's.
    /// - Throws: ``/TesseraCore/TesseraError`` when the directory cannot be created.
    public init(configuration: Configuration, logger: Logger = Observability.silentLogger,
                now: @escaping @Sendable () -> Date = { Date() }) throws(TesseraError) {
        path = configuration.directory.standardizedFileURL.path
        self.now = now
        self.logger = logger
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            // `NSError.code` is a Cocoa code (516, 512…), not an errno: report the POSIX error beneath it.
            throw TesseraError(.io(operation: "mkdir", path: path, errno: TesseraError.posixCode(of: error)))
        }
        var initial = State(configuration: configuration)
        var found: [(name: String, entry: IndexEntry, accessed: Date)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            let file = path + "/" + name
            if name.hasPrefix(DiskCacheFile.temporaryPrefix) {
                DiskCacheFile.remove(path: file)
            } else if DiskCacheFile.isEntryName(name), let status = DiskCacheFile.status(path: file) {
                found.append((name, IndexEntry(size: status.size, storedAt: status.modified), status.accessed))
            }
        }
        for file in found.sorted(by: { $0.accessed < $1.accessed }) { initial.put(file.name, file.entry) }
        state = LockedValue(initial)
    }

    deinit { state.withLock { $0.sweeper?.cancel() } }

    /// The current limits.
    public var configuration: Configuration { state.withLock { $0.configuration } }

    /// The path of the file that holds (or would hold) `url`.
    @_spi(Internal) public func filePath(for url: URL) -> String { path + "/" + DiskCacheFile.name(for: url) }

    // MARK: DiskCaching

    /// Whether `url` is stored, from the index only.
    public func contains(_ url: URL) -> Bool {
        let name = DiskCacheFile.name(for: url)
        return state.withLock { $0.index.peek(name) != nil }
    }

    /// Reads the entry for `url` and marks it as just accessed.
    @concurrent
    public func entry(for url: URL) async -> DiskCacheEntry? {
        let name = DiskCacheFile.name(for: url)
        let file = path + "/" + name
        let limit = configuration.sizeLimit
        guard state.withLock({ $0.index.peek(name) != nil }),
              let contents = DiskCacheFile.read(path: file, limit: limit) else {
            // Whatever is there (a symbolic link, a FIFO, a directory, an unreadable file) is not an
            // entry: unlink it (a link itself, never its target) so that a new store can take its place.
            discard(name)
            return nil
        }
        guard let entry = DiskCacheFile.decode(contents), entry.info.url == url.absoluteString else {
            logger.warning("disk cache file does not parse (or names another URL); removed", metadata: ["file": "\(file)"])
            discard(name)
            return nil
        }
        let date = now()
        DiskCacheFile.setTimes(path: file, accessed: date, modified: nil)
        state.withLock { state in
            _ = state.index.touch(name)
            state.hits += 1
        }
        return entry
    }

    /// Writes `data` atomically, then evicts what the limits exclude.
    @concurrent
    public func store(_ data: Data, info: HTTPCacheInfo, for url: URL) async throws(TesseraError) {
        let name = DiskCacheFile.name(for: url)
        let contents = try DiskCacheFile.encode(data, info: info)
        guard contents.count <= configuration.sizeLimit else { return }
        let date = now()
        let temporary = try DiskCacheFile.writeTemporary(contents, directory: path, stored: info.storedAt, accessed: date)
        let victims = try directory.withLock { _ throws(TesseraError) -> [String] in
            try DiskCacheFile.commit(temporary, to: path + "/" + name)
            return removeFiles(state.withLock { state in
                state.put(name, IndexEntry(size: contents.count, storedAt: info.storedAt))
                return state.victims(now: date, keep: name)
            })
        }
        logEvictions(victims)
    }

    /// Rewrites the entry with new information (its bytes are read back and kept).
    @concurrent
    public func updateInfo(_ info: HTTPCacheInfo, for url: URL) async throws(TesseraError) {
        guard let entry = await entry(for: url) else { return }
        try await store(entry.data, info: info, for: url)
    }

    /// Removes the entry for `url`.
    @concurrent
    public func remove(_ url: URL) async {
        let name = DiskCacheFile.name(for: url)
        discard(name, miss: false)
    }

    /// Removes the file at `name` and its index entry together, counting a miss when `miss` (whatever is
    /// there was asked for and is not an entry).
    private func discard(_ name: String, miss: Bool = true) {
        directory.withLock { _ in
            state.withLock { state in
                state.drop(name)
                if miss { state.misses += 1 }
            }
            DiskCacheFile.remove(path: path + "/" + name)
        }
    }

    /// Removes every entry (and any temporary file).
    @concurrent
    public func removeAll() async throws(TesseraError) {
        directory.withLock { _ in
            state.withLock { $0.index.removeAll() }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            where DiskCacheFile.isEntryName(name) || name.hasPrefix(DiskCacheFile.temporaryPrefix) {
                DiskCacheFile.remove(path: path + "/" + name)
            }
        }
    }

    // MARK: Limits and statistics

    /// Replaces the size and age limits and enforces them at once.
    public func setLimits(sizeLimit: Int, ageLimit: Duration?) {
        let date = now()
        let victims = directory.withLock { _ in
            removeFiles(state.withLock { state -> [String] in
                state.configuration.sizeLimit = sizeLimit
                state.configuration.ageLimit = ageLimit
                return state.victims(now: date, keep: nil)
            })
        }
        logEvictions(victims)
    }

    /// Removes the files of `victims` (just dropped from the index by the limits); called under the
    /// directory's lock. Returns `victims`.
    private func removeFiles(_ victims: [String]) -> [String] {
        for victim in victims { DiskCacheFile.remove(path: path + "/" + victim) }
        return victims
    }

    private func logEvictions(_ victims: [String]) {
        guard !victims.isEmpty else { return }
        logger.debug("disk cache evicted entries for its limits", metadata: ["count": "\(victims.count)", "directory": "\(path)"])
    }

    /// Removes entries past the age limit, then least recently accessed ones beyond the size limit.
    /// Returns how many were removed.
    @discardableResult
    public func sweep() -> Int {
        let date = now()
        let victims = directory.withLock { _ in removeFiles(state.withLock { $0.victims(now: date, keep: nil) }) }
        logEvictions(victims)
        return victims.count
    }

    /// Runs ``sweep()`` every `interval` on a background task until ``stopSweeping()`` or deinit.
    public func startSweeping(every interval: Duration) {
        state.withLock { state in
            guard state.sweeper == nil else { return }
            state.sweeper = Task.detached { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    do {
                        guard let cache = self else { return }
                        cache.sweep()
                    }
                }
            }
        }
    }

    /// Stops the periodic sweep.
    public func stopSweeping() {
        state.withLock { state in
            state.sweeper?.cancel()
            state.sweeper = nil
        }
    }

    /// Entry count, bytes, limits and counters, from the index.
    public var statistics: Statistics {
        state.withLock { state in
            var oldest: Date?
            state.index.forEach { node in oldest = min(oldest ?? node.value.storedAt, node.value.storedAt) }
            return Statistics(directory: path, count: state.index.count, totalBytes: state.index.totalCost,
                       sizeLimit: state.configuration.sizeLimit, ageLimit: state.configuration.ageLimit,
                       oldestStoredAt: oldest,
                       hits: state.hits, misses: state.misses, evictions: state.evictions)
        }
    }

    /// Runs `body` while holding the lock that file changes take, as a store's rename or an eviction's
    /// unlinks hold it (tests: what must not wait behind them).
    func whileChangingFiles<R>(_ body: () -> R) -> R { directory.withLock { _ in body() } }

    /// Names of entries from least to most recently accessed (tests).
    var namesByRecency: [String] {
        state.withLock { $0.index.keysOldestFirst }
    }
}
