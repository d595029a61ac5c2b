import Foundation
import Testing
@testable import TesseraImaging
@testable import TesseraTables
@testable import TesseraRemote
import Tessera
import TesseraTestSupport

/// A fresh temporary directory, removed when the value is released.
final class TemporaryDirectory {
    let url: URL
    init() {
        var template = Array((NSTemporaryDirectory() + "/tessera-tables-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        url = URL(fileURLWithPath: path, isDirectory: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}

enum TablePattern {
    static func format(_ name: String = "t", width: Int = 32, height: Int = 32, count: Int = 8,
                       style: PixelStyle = .bgra32) -> ImageFormat {
        ImageFormat(name: name, family: "test", style: style, size: PixelSize(width: width, height: height), maximumCount: count)
    }

    static func id(_ k: Int, kind: UInt8 = 0xE0) -> UUID {
        UUID(uuid: (kind, 0, UInt8(k & 0xFF), UInt8(k >> 8 & 0xFF), 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 1))
    }

    /// The crash-test writer's own pixel function (``StressPattern/fill(_:entity:source:)``): a pure
    /// function of both ids, so a reader recomputes exactly what the killed writer stored.
    static func fill(_ view: MutableBitmapView, entity: UUID, source: UUID) {
        StressPattern.fill(view, entity: entity, source: source)
    }

    static func expected(_ layout: BitmapLayout, entity: UUID, source: UUID) -> Bitmap {
        Bitmap(layout: layout) { fill($0, entity: entity, source: source) }
    }

    /// Whether `image` holds exactly (all bytes, padding included) the pattern for its ids.
    static func isExact(_ image: TableImage) -> Bool {
        let want = expected(image.layout, entity: image.entityID, source: image.sourceID)
        return image.withUnsafeBytes { a in want.withUnsafeBytes { b in a.count == b.count && memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    @discardableResult
    static func store(_ table: ImageTable, _ entity: UUID, _ source: UUID) throws -> TableImage {
        try table.store(entityID: entity, sourceID: source) { fill($0, entity: entity, source: source) }
    }

    static func storageFailure(_ body: () throws -> Void) -> StorageFailure? {
        do { try body() } catch let error as TesseraError {
            if case .storage(let failure) = error.reason { return failure }
        } catch {}
        return nil
    }
}
