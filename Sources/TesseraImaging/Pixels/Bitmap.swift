/// An immutable decoded image that owns its pixels (64-byte aligned, rows aligned as
/// ``PixelStyle/bytesPerRow(forWidth:)`` says). Cheap to copy: copies share the same memory.
public struct Bitmap: BitmapImage, CustomStringConvertible {
    /// Size, style and row stride.
    public let layout: BitmapLayout
    /// How complete the decode that produced these pixels was (``DecodeIntegrity/intact`` for pixels that
    /// did not come from a decoder). ``ImageDecoder`` sets it; drawing into a new bitmap does not carry it, but
    /// ``ImageProcessor/process(_:)`` does.
    public var integrity: DecodeIntegrity = .intact
    private let storage: Storage

    /// Allocates zeroed memory for `layout` and lets `fill` write the pixels. After `fill` returns the
    /// pixels never change again.
    public init<E: Error>(layout: BitmapLayout, fill: (MutableBitmapView) throws(E) -> Void) throws(E) {
        self.layout = layout
        self.storage = Storage(byteCount: layout.byteCount)
        try fill(MutableBitmapView(layout: layout, baseAddress: storage.pointer))
    }

    /// A bitmap of `width × height` in `style` with aligned rows, filled by `fill`.
    public init<E: Error>(width: Int, height: Int, style: PixelStyle, fill: (MutableBitmapView) throws(E) -> Void) throws(E) {
        try self.init(layout: BitmapLayout(width: width, height: height, style: style), fill: fill)
    }

    /// Calls `body` with the pixel bytes.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.pointer, count: layout.byteCount))
    }

    /// `"Bitmap(WxH style …)"`.
    public var description: String { "Bitmap(\(layout))" }

    /// The owned allocation.
    ///
    /// `@unchecked Sendable` is safe because the pointer never changes and the bytes are written only
    /// inside `Bitmap.init`'s `fill` closure, before the storage can be shared; afterwards they are read-only.
    private final class Storage: @unchecked Sendable {
        let pointer: UnsafeMutableRawPointer
        init(byteCount: Int) {
            pointer = UnsafeMutableRawPointer.allocate(byteCount: max(byteCount, 1), alignment: PixelStyle.rowAlignment)
            pointer.initializeMemory(as: UInt8.self, repeating: 0, count: max(byteCount, 1))
        }
        deinit { pointer.deallocate() }
    }
}
