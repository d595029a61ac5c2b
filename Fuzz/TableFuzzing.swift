import Foundation

/// The image table metadata reader under fuzzing: the input becomes a table file (file header page,
/// slot headers, pixels), which is then decoded, listed, opened, read, verified, written to,
/// compacted and reopened.
///
/// A checksum or 48-bit commit hash is out of reach of blind mutation, so the first input byte
/// tells the harness to repair what the fuzzer cannot forge (a hostile file can, since none of
/// these are secrets):
/// - bit 0: the file is the valid header page of ``format`` followed by the rest of the input
///   (so mutations land in slot headers and pixels);
/// - bit 1: recompute the file header checksum;
/// - bit 3: recompute the pixel checksum of every slot whose commit word is non-zero;
/// - bit 2: recompute those slots' commit words (after bit 3).
///
/// Invariants (traps otherwise): nothing crashes or faults; a header that decodes describes a
/// valid format; the table opens; every hit can be read in full; an entry stored afterwards reads
/// back exactly, also after compaction and after closing and reopening the file (and is not reported damaged).
enum TableFuzzing {
    /// 8×8 gray8, 16 entries: header page + one page of slot headers + 16 one-page slots (72 KiB).
    static let format = ImageFormat(name: "fuzz", style: .gray8, size: PixelSize(width: 8, height: 8), maximumCount: 16)

    static let directory: URL = {
        let env = ProcessInfo.processInfo.environment
        let base = env["TESSERA_FUZZ_TMP"] ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : NSTemporaryDirectory())
        return URL(fileURLWithPath: base, isDirectory: true).appendingPathComponent("tessera-fuzz-\(getpid())", isDirectory: true)
    }()

    static let probeEntity = UUID(uuid: (0xF0, 0x22, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0x01))

    /// The table file bytes an input stands for (see the type's documentation).
    static func file(from input: UnsafeRawBufferPointer) -> [UInt8] {
        guard let control = input.first else { return [] }
        let payload = Array(input.dropFirst())
        var file = control & 1 != 0 ? TableFileHeader.encode(format) + payload : payload
        let page = ImageFormat.pageSize
        if control & 2 != 0, file.count >= page {
            file.withUnsafeMutableBytes { p in
                p.storeBytes(of: PixelChecksum.hash(p.baseAddress!, count: page - 8), toByteOffset: page - 8, as: UInt64.self)
            }
        }
        if control & 12 != 0 {
            file.withUnsafeMutableBytes { p in
                for slot in 0..<format.maximumCount {
                    let at = page + slot * ImageFormat.slotHeaderSize
                    guard at + ImageFormat.slotHeaderSize <= p.count else { break }
                    guard p.load(fromByteOffset: at, as: UInt64.self) != 0 else { continue }
                    let header = SlotHeader(pointer: p.baseAddress! + at, slot: slot)
                    let pixels = format.headerBytes + slot * format.bytesPerEntry
                    if control & 8 != 0, pixels + format.layout.byteCount <= p.count {
                        let sum = PixelChecksum.hash(p.baseAddress! + pixels, count: format.layout.byteCount)
                        p.storeBytes(of: sum, toByteOffset: at + 48, as: UInt64.self)
                    }
                    if control & 4 != 0 { p.storeBytes(of: header.expectedCommitWord, toByteOffset: at, as: UInt64.self) }
                }
            }
        }
        return file
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = file(from: input)
        let path = directory.appendingPathComponent(format.fileName)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path.path, contents: Data(bytes)) else { fatalError("cannot write \(path.path)") }

        if bytes.count >= ImageFormat.pageSize, let decoded = TableFileHeader.decode(Array(bytes.prefix(ImageFormat.pageSize))) {
            do { try decoded.validate() } catch { preconditionFailure("decoded an invalid format \(decoded): \(error)") }
        }
        _ = ImageTable.existingFormats(in: directory)

        do {
            let table = try ImageTable(format: format, directory: directory)
            for entry in table.entries() {
                if let image = table.image(for: entry.entityID) {
                    _ = image.withUnsafeBytes { PixelChecksum.hash($0.baseAddress!, count: $0.count) }
                }
            }
            _ = table.verify()
            let stored = try table.store(entityID: probeEntity, sourceID: probeEntity) { fill($0) }
            precondition(isExact(stored), "a fresh store reads back wrong")
            if let first = table.entries().first(where: { $0.entityID != probeEntity }) { table.delete(entityID: first.entityID) }
            try table.compact()
            guard let again = table.image(for: probeEntity) else { preconditionFailure("stored entry lost by compaction") }
            precondition(isExact(again), "stored entry changed by compaction")
        } catch {
            preconditionFailure("table operation failed: \(error)")
        }
        do {
            let reopened = try ImageTable(format: format, directory: directory)
            guard let image = reopened.image(for: probeEntity) else { preconditionFailure("stored entry lost on reopen") }
            precondition(isExact(image), "stored entry wrong after reopen")
            precondition(!reopened.verify().damaged.contains { $0.entityID == probeEntity }, "stored entry reported damaged")
        } catch {
            preconditionFailure("reopening failed: \(error)")
        }
    }

    static func fill(_ view: MutableBitmapView) {
        for i in 0..<view.layout.byteCount { view.baseAddress.storeBytes(of: UInt8(truncatingIfNeeded: i &* 7 &+ 1), toByteOffset: i, as: UInt8.self) }
    }

    static func isExact(_ image: TableImage) -> Bool {
        image.withUnsafeBytes { b in b.indices.allSatisfy { b[$0] == UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) } }
    }
}
