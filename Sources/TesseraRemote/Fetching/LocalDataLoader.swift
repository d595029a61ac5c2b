@_spi(Internal) import TesseraImaging
import Foundation

/// Loads `file:` and `data:` URLs for ``ImageManager`` without a network loader: a file is read (within
/// the request's size limit), a `data:` URL's payload decoded (base64 or percent-encoded). Such URLs
/// take no lane slot and never touch the disk cache: their bytes are already local.
struct LocalDataLoader: Sendable {
    /// Whether `url` is one this loader answers (`file:` or `data:`).
    static func handles(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "file" || scheme == "data"
    }

    /// The bytes of `request`'s URL, as a `200` response.
    /// - Throws: ``/TesseraCore/TesseraError``: `.io` when a file cannot be read,
    ///   ``/TesseraCore/FetchFailure/tooLarge(bytes:limit:url:)`` beyond the size limit,
    ///   ``/TesseraCore/FetchFailure/invalidURL(_:)`` for a malformed `data:` URL.
    func load(_ request: LoadRequest) throws -> LoadResponse {
        let url = request.url
        let data = url.isFileURL ? try read(url, limit: request.maximumBytes) : try Self.payload(of: url)
        guard data.count <= request.maximumBytes else {
            throw TesseraError(.fetching(.tooLarge(bytes: data.count, limit: request.maximumBytes, url: url.absoluteString)))
        }
        return LoadResponse(url: url, statusCode: 200, data: data)
    }

    private func read(_ url: URL, limit: Int) throws -> Data {
        let file = try ImageFile(path: url.path)
        guard file.size <= limit else {
            throw TesseraError(.fetching(.tooLarge(bytes: file.size, limit: limit, url: url.absoluteString)))
        }
        return try file.contents()
    }

    /// The payload of a `data:` URL: `data:[<media type>][;base64],<data>`.
    static func payload(of url: URL) throws -> Data {
        let text = url.absoluteString
        guard let comma = text.firstIndex(of: ","), text.lowercased().hasPrefix("data:") else {
            throw TesseraError(.fetching(.invalidURL(String(text.prefix(64)))))
        }
        let header = text[text.index(text.startIndex, offsetBy: 5)..<comma]
        let body = String(text[text.index(after: comma)...])
        if header.lowercased().hasSuffix(";base64") {
            guard let data = Data(base64Encoded: body.removingPercentEncoding ?? body) else {
                throw TesseraError(.fetching(.invalidURL(String(text.prefix(64)))))
            }
            return data
        }
        return try percentDecoded(body, url: text)
    }

    /// The bytes of percent-encoded `text` (`%41` → `A`, any byte value).
    private static func percentDecoded(_ text: String, url: String) throws -> Data {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw TesseraError(.fetching(.invalidURL(String(url.prefix(64)))))
            }
            bytes.append(high << 4 | low)
        }
        return Data(bytes)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
