/// Writable pixels in memory that someone else owns: a ``Bitmap`` being filled, or a slot of a
/// memory-mapped image table. Decoders and ``DrawingContext`` write through it.
///
/// It is a plain pointer with a layout: it does not keep the memory alive, so use it only while the
/// owner guarantees the memory (inside the closure that handed it to you).
public struct MutableBitmapView {
    /// Size, style and row stride.
    public let layout: BitmapLayout
    /// The first byte of the first row; `layout.byteCount` bytes are writable from here.
    public let baseAddress: UnsafeMutableRawPointer

    /// Wraps memory. The caller promises `layout.byteCount` writable bytes at `baseAddress`.
    public init(layout: BitmapLayout, baseAddress: UnsafeMutableRawPointer) {
        self.layout = layout
        self.baseAddress = baseAddress
    }

    /// The bytes as a buffer.
    public var bytes: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: baseAddress, count: layout.byteCount)
    }

    /// The start of row `y`.
    public func row(_ y: Int) -> UnsafeMutableRawPointer {
        baseAddress + y * layout.bytesPerRow
    }

    /// Prepares fresh memory for drawing: ``PixelStyle/bgr32`` becomes opaque black (its unused byte
    /// 255, which cairo's `RGB24` never writes); other styles are left as they are (zeroed memory is
    /// transparent black).
    public func prepareForDrawing() {
        if layout.style == .bgr32 {
            bytes.withMemoryRebound(to: UInt32.self) { $0.update(repeating: 0xFF00_0000) }
        }
    }

    /// For ``PixelStyle/bgr32`` filled with premultiplied BGRA by a codec: sets every pixel's fourth
    /// byte to 255, which composites the colour over black. Other styles are left as they are.
    func setOpaqueAfterPremultipliedDecode() {
        guard layout.style == .bgr32 else { return }
        for y in 0..<layout.height {
            let pixels = row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<layout.width { pixels[x &* 4 &+ 3] = 255 }
        }
    }

    /// Sets every byte, padding included, to zero (transparent black; black for opaque styles
    /// except that ``PixelStyle/bgr32`` keeps its unused byte at 0 here).
    public func clear() {
        baseAddress.initializeMemory(as: UInt8.self, repeating: 0, count: layout.byteCount)
    }
}
