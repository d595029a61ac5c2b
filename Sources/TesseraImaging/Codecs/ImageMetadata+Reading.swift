extension ImageMetadata {
    /// The metadata of `data`, a JPEG, PNG or WebP file, told apart by its first bytes.
    static func read(_ data: UnsafeRawBufferPointer) -> ImageMetadata {
        if ExifOrientationReader.starts(data, with: [0xFF, 0xD8]) { return jpeg(data) }
        if ExifOrientationReader.starts(data, with: ContainerChunks.pngSignature) { return png(data) }
        if ContainerChunks.isWebP(data) { return webp(data) }
        return ImageMetadata()
    }

    /// The parts of a JPEG: the segments ``ExifOrientationReader/scan(jpeg:)`` found before the first scan.
    private static func jpeg(_ data: UnsafeRawBufferPointer) -> ImageMetadata {
        let findings = ExifOrientationReader.scan(jpeg: data)
        return ImageMetadata(exif: findings.exif.flatMap { tiff(data[$0]) }, xmp: findings.xmp.flatMap { part(data[$0]) },
                             iptc: findings.photoshop.flatMap { iptc(inPhotoshopResources: data[$0]) })
    }

    /// The parts of a PNG: `eXIf` and an uncompressed `iTXt` named `XML:com.adobe.xmp`, anywhere before `IEND`.
    private static func png(_ data: UnsafeRawBufferPointer) -> ImageMetadata {
        var metadata = ImageMetadata()
        for chunk in ContainerChunks.png(data) {
            let body = data[chunk.body]
            switch chunk.type {
            case "eXIf" where metadata.exif == nil: metadata.exif = tiff(body)
            case "iTXt" where metadata.xmp == nil:
                // keyword \0, compression flag, compression method, language \0, translated keyword \0, text
                let keyword = Array("XML:com.adobe.xmp".utf8) + [0]
                guard ExifOrientationReader.starts(UnsafeRawBufferPointer(rebasing: body), with: keyword) else { continue }
                var i = body.startIndex + keyword.count
                guard i + 2 <= body.endIndex, body[i] == 0 else { continue }   // compressed XMP is not read
                i += 2
                guard let language = body[i...].firstIndex(of: 0), let translated = body[(language + 1)...].firstIndex(of: 0) else { continue }
                metadata.xmp = part(body[(translated + 1)...])
            default: break
            }
        }
        return metadata
    }

    /// The parts of a WebP: its `EXIF` and `XMP ` chunks (written in the extended format only).
    private static func webp(_ data: UnsafeRawBufferPointer) -> ImageMetadata {
        var metadata = ImageMetadata()
        for chunk in ContainerChunks.riff(data) {
            switch chunk.type {
            case "EXIF" where metadata.exif == nil: metadata.exif = tiff(data[chunk.body])
            case "XMP " where metadata.xmp == nil: metadata.xmp = part(data[chunk.body])
            default: break
            }
        }
        return metadata
    }

    /// `bytes` as a part, unless empty or over ``maximumPartBytes``.
    private static func part(_ bytes: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        bytes.isEmpty || bytes.count > maximumPartBytes ? nil : Array(bytes)
    }

    /// A TIFF structure (some writers put JPEG's `Exif\0\0` before it in PNG and WebP too), when it starts
    /// with a TIFF byte-order mark.
    private static func tiff(_ bytes: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        var bytes = bytes
        if ExifOrientationReader.starts(UnsafeRawBufferPointer(rebasing: bytes), with: ExifOrientationReader.exifSignature) {
            bytes = bytes.dropFirst(6)
        }
        guard let tiff = part(bytes), TIFFMetadata.Reader(tiff) != nil else { return nil }
        return tiff
    }

    /// The IPTC-IIM datasets of Photoshop image resources: each resource is `8BIM`, a 2-byte id, a Pascal
    /// name padded to an even length, a 4-byte size and the data padded to an even length; IPTC is id `0x0404`.
    private static func iptc(inPhotoshopResources resources: Slice<UnsafeRawBufferPointer>) -> [UInt8]? {
        let bytes = UnsafeRawBufferPointer(rebasing: resources)
        var i = 0
        while i + 12 <= bytes.count, ExifOrientationReader.starts(UnsafeRawBufferPointer(rebasing: bytes[i...]), with: Array("8BIM".utf8)) {
            let id = Int(bytes[i + 4]) << 8 | Int(bytes[i + 5])
            let nameLength = Int(bytes[i + 6])
            let sizeAt = i + 6 + ((nameLength + 2) & ~1)   // the length byte and the name, padded to even
            guard sizeAt + 4 <= bytes.count else { return nil }
            let size = Int(bytes[sizeAt]) << 24 | Int(bytes[sizeAt + 1]) << 16 | Int(bytes[sizeAt + 2]) << 8 | Int(bytes[sizeAt + 3])
            let start = sizeAt + 4
            guard size <= bytes.count - start else { return nil }
            if id == 0x0404 { return part(bytes[start..<(start + size)]) }
            i = start + size + (size & 1)
        }
        return nil
    }
}
