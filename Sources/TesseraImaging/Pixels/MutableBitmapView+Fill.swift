extension MutableBitmapView {
    /// Fills rows `first...` with what a truncated image shows where no data arrived (every decoder's
    /// lenient path uses it): transparent when `transparent` (premultiplied zero; black over black in
    /// ``PixelStyle/bgr32``, ``PixelStyle/gray8`` and ``PixelStyle/bgr565``), otherwise
    /// ``DecodeIntegrity/fillGray`` in every channel, opaque.
    func fillMissingRows(from first: Int, transparent: Bool) {
        guard first < layout.height else { return }
        let gray = DecodeIntegrity.fillGray
        for y in max(0, first)..<layout.height {
            let pixels = row(y)
            switch layout.style {
            case .gray8:
                pixels.initializeMemory(as: UInt8.self, repeating: transparent ? 0 : gray, count: layout.width)
            case .bgr565:
                let g5 = UInt16(gray >> 3), g6 = UInt16(gray >> 2)
                pixels.initializeMemory(as: UInt16.self, repeating: transparent ? 0 : g5 << 11 | g6 << 5 | g5, count: layout.width)
            case .bgra32, .bgr32:
                let clear: UInt32 = layout.style == .bgr32 ? 0xFF00_0000 : 0
                pixels.initializeMemory(as: UInt32.self, repeating: transparent ? clear : 0xFF00_0000 | UInt32(gray) * 0x01_0101,
                                        count: layout.width)
            }
        }
    }
}
