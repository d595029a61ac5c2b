import Foundation

/// The disk cache's index and metadata reader under fuzzing: the input becomes a cached file (its
/// `TSC1` header, JSON ``HTTPCacheInfo`` and body) plus its file-system metadata, which a fresh
/// ``DiskCache`` then indexes, reads, sweeps, writes next to, and reopens.
///
/// The first input byte steers what blind mutation would rarely produce:
/// - bit 0: the rest is `JSON 0x00 BODY` and is wrapped in a valid header (magic and length), so
///   mutations land in the JSON;
/// - bit 1: also plant the bytes as a temporary file (`.tmp-…`) and as a second entry named for
///   another URL (a stray or renamed file);
/// - bit 2: set the file's access and modification times from the last 16 input bytes;
/// - bit 3: an age limit of one day; bit 4: a size limit of 2 KB.
///
/// Invariants (traps otherwise): nothing crashes; a read returns exactly what
/// ``DiskCacheFile/decode(_:)`` makes of the file and only for the URL it names (otherwise the
/// file is removed); the index counts only regular entry files and no temporary file survives an
/// open; a body stored afterwards reads back exactly, after an information update and after
/// reopening.
enum DiskCacheFuzzing {
    static let directory: URL = {
        let env = ProcessInfo.processInfo.environment
        let base = env["TESSERA_FUZZ_TMP"] ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory())
        return URL(fileURLWithPath: base, isDirectory: true).appendingPathComponent("tessera-fuzz-disk-\(getpid())", isDirectory: true)
    }()

    static let probeURL = URL(string: "http://127.0.0.1:8080/probe.png")!
    static let strayURL = URL(string: "http://127.0.0.1:8080/stray.png")!
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    /// Computed, not a stored global: `Data` keeps its storage pointer with enum tag bits, which
    /// LeakSanitizer does not recognise as a reference from a global (a false leak report).
    static var probeBody: Data { Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }) }

    /// The file bytes an input stands for (see the type's documentation).
    static func file(from input: UnsafeRawBufferPointer) -> Data {
        guard let control = input.first else { return Data() }
        let payload = Data(input.dropFirst())
        guard control & 1 != 0 else { return payload }
        let split = payload.firstIndex(of: 0) ?? payload.endIndex
        let json = payload[..<split]
        var file = Data(DiskCacheFile.magic)
        withUnsafeBytes(of: UInt32(json.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(json)
        if split < payload.endIndex { file.append(payload[(split + 1)...]) }
        return file
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        let control = input.first ?? 0
        let bytes = file(from: input)
        let fm = FileManager.default
        try? fm.removeItem(at: directory)
        try? fm.createDirectory(at: directory, withIntermediateDirectories: true)
        let decoded = DiskCacheFile.decode(bytes)
        // The file goes where its own URL would put it, so that a valid one is found.
        let url = decoded.flatMap { URL(string: $0.info.url) } ?? probeURL
        let path = directory.path + "/" + DiskCacheFile.name(for: url)
        guard fm.createFile(atPath: path, contents: bytes) else { fatalError("cannot write \(path)") }
        if control & 2 != 0 {
            _ = fm.createFile(atPath: directory.path + "/" + DiskCacheFile.temporaryPrefix + "fuzz", contents: bytes)
            _ = fm.createFile(atPath: directory.path + "/" + DiskCacheFile.name(for: strayURL), contents: bytes)
        }
        if control & 4 != 0, input.count >= 17 {
            let tail = UnsafeRawBufferPointer(rebasing: input[(input.count - 16)...])
            var times = [timespec(tv_sec: Int(Int64(littleEndian: tail.loadUnaligned(as: Int64.self))), tv_nsec: 0),
                         timespec(tv_sec: Int(Int64(littleEndian: tail.loadUnaligned(fromByteOffset: 8, as: Int64.self))), tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, path, &times, 0)
        }
        let configuration = DiskCache.Configuration(directory: directory, sizeLimit: control & 16 != 0 ? 2048 : 1 << 20,
                                                    ageLimit: control & 8 != 0 ? .seconds(86_400) : nil)
        let clock: @Sendable () -> Date = { now }
        blocking {
            do {
                let cache = try DiskCache(configuration: configuration, now: clock)
                let names = (try? fm.contentsOfDirectory(atPath: directory.path)) ?? []
                precondition(!names.contains { $0.hasPrefix(DiskCacheFile.temporaryPrefix) }, "a temporary file survived open")
                precondition(cache.statistics.count <= 2 && cache.statistics.totalBytes >= 0, "index: \(cache.statistics)")
                let entry = await cache.entry(for: url)
                if let entry {
                    guard let decoded, decoded.info.url == url.absoluteString else { preconditionFailure("served a file that does not decode for its URL") }
                    precondition(entry.data == decoded.data && entry.info == decoded.info, "served other bytes than the file holds")
                    _ = entry.info.isFresh(at: now)
                    _ = entry.info.refreshed(by: LoadResponse(url: url, statusCode: 304, headers: ["cache-control": "max-age=60"]),
                                             now: now, defaultMaxAge: .seconds(60))
                } else {
                    precondition(decoded?.info.url != url.absoluteString, "a valid file was not served")
                    precondition(!cache.contains(url), "an unreadable file stayed indexed")
                }
                if url != strayURL {
                    let stray = await cache.entry(for: strayURL)
                    precondition(stray == nil, "served a file stored under another URL's name")
                }
                _ = cache.sweep()
                try await cache.store(probeBody, info: info(now), for: probeURL)
                guard let stored = await cache.entry(for: probeURL), stored.data == probeBody else { preconditionFailure("a fresh store reads back wrong") }
                try await cache.updateInfo(info(now.addingTimeInterval(1)), for: probeURL)
                let reopened = try DiskCache(configuration: configuration, now: clock)
                guard let again = await reopened.entry(for: probeURL), again.data == probeBody,
                      again.info.storedAt == now.addingTimeInterval(1) else { preconditionFailure("stored entry lost or wrong after reopen") }
            } catch {
                preconditionFailure("disk cache operation failed: \(error)")
            }
        }
    }

    static func info(_ date: Date) -> HTTPCacheInfo {
        HTTPCacheInfo(url: probeURL.absoluteString, etag: "\"e\"", storedAt: date, expiresAt: date.addingTimeInterval(60))
    }
}
