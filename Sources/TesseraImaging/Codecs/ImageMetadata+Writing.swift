import CDeflate

extension ImageMetadata {
    /// The most payload one JPEG segment holds: its 2-byte length counts itself, so 65,535 − 2.
    static let jpegSegmentPayload = 65_533

    /// `file` (a complete JPEG, PNG or WebP file an encoder wrote, `width` × `height`) with these parts
    /// added as the table of ``ImageMetadata`` says; AVIF's are written by ``AVIFEncoder`` itself. Parts a
    /// format has no place for (IPTC in PNG and WebP, a part over a JPEG segment) are left out.
    func embedded(in file: [UInt8], format: ImageFileFormat, width: Int, height: Int) -> [UInt8] {
        guard !isEmpty else { return file }
        switch format {
        case .jpeg: return jpeg(file)
        case .png: return png(file)
        case .webp: return webp(file, width: width, height: height)
        case .avif, .gif, .heic: return file
        }
    }

    /// APP1 EXIF, APP1 XMP and APP13 IPTC right after SOI and the JFIF APP0 segment that TurboJPEG writes.
    private func jpeg(_ file: [UInt8]) -> [UInt8] {
        guard file.count >= 4, file[0] == 0xFF, file[1] == 0xD8 else { return file }
        var insertAt = 2
        if file[2] == 0xFF, file[3] == 0xE0, file.count >= 6 {
            insertAt = 4 + (Int(file[4]) << 8 | Int(file[5]))
            guard insertAt <= file.count else { return file }
        }
        var segments: [UInt8] = []
        func segment(_ marker: UInt8, _ payload: [UInt8]) {
            guard payload.count <= Self.jpegSegmentPayload else { return }
            segments += [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        if let exif { segment(0xE1, ExifOrientationReader.exifSignature + exif) }
        if let xmp { segment(0xE1, ExifOrientationReader.xmpSignature + xmp) }
        if let iptc {
            // One Photoshop resource: 8BIM, id 0x0404, an empty Pascal name padded to two bytes, the size, the data padded to even.
            var resource = ExifOrientationReader.photoshopSignature + Array("8BIM".utf8) + [0x04, 0x04, 0, 0]
            resource += bigEndian32(iptc.count) + iptc
            if iptc.count & 1 == 1 { resource.append(0) }
            segment(0xED, resource)
        }
        return Array(file[..<insertAt]) + segments + file[insertAt...]
    }

    /// `eXIf` and an uncompressed `iTXt` `XML:com.adobe.xmp` right after `IHDR` (both must come before `IDAT`).
    private func png(_ file: [UInt8]) -> [UInt8] {
        let ihdrEnd = ContainerChunks.pngSignature.count + 12 + 13
        guard file.count > ihdrEnd else { return file }
        var chunks: [UInt8] = []
        func chunk(_ type: String, _ body: [UInt8]) {
            let typed = Array(type.utf8) + body
            let crc = typed.withUnsafeBytes { UInt32(libdeflate_crc32(0, $0.baseAddress, $0.count)) }
            chunks += bigEndian32(body.count) + typed + bigEndian32(Int(crc))
        }
        if let exif { chunk("eXIf", exif) }
        // keyword, NUL, compression flag 0, method 0, empty language tag, NUL, empty translated keyword, NUL, text
        if let xmp { chunk("iTXt", Array("XML:com.adobe.xmp".utf8) + [0, 0, 0, 0, 0] + xmp) }
        return Array(file[..<ihdrEnd]) + chunks + file[ihdrEnd...]
    }

    /// The extended format (WebP's `VP8X` with the EXIF and XMP flags) with `EXIF` and `XMP ` chunks after
    /// the image data, where the container specification puts them. A simple file (`VP8 ` or `VP8L` first)
    /// gets a `VP8X` chunk: flags (alpha from the `VP8L` header's alpha bit), the canvas's width − 1 and
    /// height − 1 in 24 bits each.
    private func webp(_ file: [UInt8], width: Int, height: Int) -> [UInt8] {
        let first = file.withUnsafeBytes { bytes in
            var chunks = ContainerChunks.riff(bytes)
            return chunks.next()
        }
        guard let first, width >= 1, height >= 1, width <= 1 << 24, height <= 1 << 24 else { return file }
        var body = Array(file[12...])
        var flags: UInt8 = (exif == nil ? 0 : 0x08) | (xmp == nil ? 0 : 0x04)
        switch first.type {
        case "VP8X":
            body[8] |= flags
        case "VP8 ", "VP8L":
            // VP8L: the signature 0x2F, then width − 1 (14 bits), height − 1 (14 bits), the alpha bit.
            if first.type == "VP8L", first.body.count >= 5, file[first.body.lowerBound + 4] & 0x10 != 0 { flags |= 0x10 }
            let header: [UInt8] = Array("VP8X".utf8) + littleEndian(10, bytes: 4) + [flags, 0, 0, 0]
                + littleEndian(width - 1, bytes: 3) + littleEndian(height - 1, bytes: 3)
            body = header + body
        default:
            return file
        }
        func chunk(_ type: String, _ payload: [UInt8]) {
            body += Array(type.utf8) + littleEndian(payload.count, bytes: 4) + payload
            if payload.count & 1 == 1 { body.append(0) }
        }
        if let exif { chunk("EXIF", exif) }
        if let xmp { chunk("XMP ", xmp) }
        return Array("RIFF".utf8) + littleEndian(body.count + 4, bytes: 4) + Array("WEBP".utf8) + body
    }

    private func bigEndian32(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private func littleEndian(_ value: Int, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(value >> (8 * $0) & 0xFF) }
    }
}
