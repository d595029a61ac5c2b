#if Serving
/// The head of a *plain* HTTP/1.1 request, read from socket bytes by the ``MemoryHitHandler``: a `GET` or
/// `HEAD` with an origin-form target, `HTTP/1.1`, well-formed header fields, no body and nothing that asks
/// for more than HTTP/1.1 does by default. Such a request ends at its first empty line, where NIO's own
/// decoder ends it too, so the handler can answer it, or hand exactly its bytes to the decoder, without
/// the two ever disagreeing about where a request ends.
///
/// Anything else is *other*, and the handler leaves the connection to NIO's decoder from then on
/// (``MemoryHitHandler``): a `Content-Length` or `Transfer-Encoding` (a body), `Upgrade`, `Expect`, a
/// `Connection` other than one `keep-alive`, HTTP/1.0, a line ending without CR, a folded or malformed
/// field, a control byte, a head of more than ``maximumLength`` bytes or ``maximumFields`` fields. Being
/// strict costs nothing: the decoder reads what this does not.
struct PlainRequestHead {
    /// Whether the method is `GET` (else `HEAD`).
    let isGet: Bool
    /// The request target as sent (path and query).
    let target: String
    let accept: String?
    let ifNoneMatch: String?
    let ifModifiedSince: String?

    /// What the start of a connection's unread bytes holds.
    enum Reading {
        /// No empty line yet, within ``maximumLength``.
        case incomplete
        /// A plain request, whose head (empty line included) is `length` bytes.
        case plain(PlainRequestHead, length: Int)
        /// A request that is not plain, or bytes that are no request.
        case other
    }

    /// Longest plain head, in bytes (browsers send under 2 KiB; NIO's decoder takes up to 80 KiB).
    static let maximumLength = 16 * 1024
    /// Most header fields of a plain head.
    static let maximumFields = 64

    /// Reads the request at the start of `bytes`.
    static func read(_ bytes: UnsafeRawBufferPointer) -> Reading {
        // The first LF that ends an empty line ends the head; an LF without its CR before it (which NIO's
        // decoder may take as a line end) makes the request not plain, wherever it is.
        var index = 0
        while index < bytes.count {
            if bytes[index] == lf {
                guard index > 0, bytes[index - 1] == cr else { return .other }
                if index >= 3, bytes[index - 2] == lf, bytes[index - 3] == cr {
                    let end = index + 1
                    guard end <= maximumLength, let head = parse(UnsafeRawBufferPointer(rebasing: bytes[..<end])) else { return .other }
                    return .plain(head, length: end)
                }
            }
            index += 1
        }
        return bytes.count > maximumLength ? .other : .incomplete
    }

    /// The plain request `head` (its bytes through the empty line), or `nil` when it is not plain.
    private static func parse(_ head: UnsafeRawBufferPointer) -> PlainRequestHead? {
        // Request line: GET|HEAD SP origin-form-target SP HTTP/1.1 CR LF
        let isGet: Bool
        var index: Int
        if head.starts(with: "GET ".utf8) {
            isGet = true
            index = 4
        } else if head.starts(with: "HEAD ".utf8) {
            isGet = false
            index = 5
        } else {
            return nil
        }
        let targetStart = index
        guard index < head.count, head[index] == UInt8(ascii: "/") else { return nil }
        while index < head.count, (0x21...0x7E).contains(head[index]) { index += 1 }
        let targetEnd = index
        guard UnsafeRawBufferPointer(rebasing: head[index...]).starts(with: " HTTP/1.1\r\n".utf8) else { return nil }
        index += 11

        var accept: String?, ifNoneMatch: String?, ifModifiedSince: String?
        var fields = 0, sawConnection = false
        while true {
            guard index + 1 < head.count else { return nil }
            if head[index] == cr { return head[index + 1] == lf && index + 2 == head.count ? finish() : nil }
            fields += 1
            guard fields <= maximumFields else { return nil }
            // name ":" OWS value OWS CR LF; the name a token, the value visible bytes, spaces and tabs.
            let nameStart = index
            while index < head.count, isTokenByte(head[index]) { index += 1 }
            guard index > nameStart, index < head.count, head[index] == UInt8(ascii: ":") else { return nil }
            let name = UnsafeRawBufferPointer(rebasing: head[nameStart..<index])
            index += 1
            while index < head.count, head[index] == space || head[index] == tab { index += 1 }
            let valueStart = index
            while index < head.count, isValueByte(head[index]) { index += 1 }
            guard index + 1 < head.count, head[index] == cr, head[index + 1] == lf else { return nil }
            var valueEnd = index
            while valueEnd > valueStart, head[valueEnd - 1] == space || head[valueEnd - 1] == tab { valueEnd -= 1 }
            let value = UnsafeRawBufferPointer(rebasing: head[valueStart..<valueEnd])
            index += 2
            switch FieldName(name) {
            case .accept: accept = String(decoding: value, as: UTF8.self)
            case .ifNoneMatch: ifNoneMatch = String(decoding: value, as: UTF8.self)
            case .ifModifiedSince: ifModifiedSince = String(decoding: value, as: UTF8.self)
            case .connection:
                guard !sawConnection, equalsIgnoringCase(value, "keep-alive") else { return nil }
                sawConnection = true
            case .body, .upgrade:
                return nil
            case .other:
                break
            }
        }

        func finish() -> PlainRequestHead {
            PlainRequestHead(isGet: isGet, target: String(decoding: UnsafeRawBufferPointer(rebasing: head[targetStart..<targetEnd]), as: UTF8.self),
                             accept: accept, ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince)
        }
    }

    /// The fields a plain head is read for, or refused for.
    private enum FieldName {
        case accept, ifNoneMatch, ifModifiedSince, connection
        /// `Content-Length`, `Transfer-Encoding`: a body, whose framing stays the decoder's.
        case body
        /// `Upgrade`, `Expect`: the connection or the exchange would change.
        case upgrade
        case other

        init(_ name: UnsafeRawBufferPointer) {
            if equalsIgnoringCase(name, "accept") { self = .accept }
            else if equalsIgnoringCase(name, "if-none-match") { self = .ifNoneMatch }
            else if equalsIgnoringCase(name, "if-modified-since") { self = .ifModifiedSince }
            else if equalsIgnoringCase(name, "connection") { self = .connection }
            else if equalsIgnoringCase(name, "content-length") || equalsIgnoringCase(name, "transfer-encoding") { self = .body }
            else if equalsIgnoringCase(name, "upgrade") || equalsIgnoringCase(name, "expect") { self = .upgrade }
            else { self = .other }
        }
    }

    /// Whether `bytes` spell `lowercase` in any case (`lowercase` is lower-case ASCII).
    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for offset in 0..<bytes.count {
            let byte = bytes[offset]
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            guard lowered == expected[offset] else { return false }
        }
        return true
    }

    /// RFC 9110's `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A field value's bytes: visible ASCII, space, tab and bytes above ASCII (RFC 9110's `field-content`).
    private static func isValueByte(_ byte: UInt8) -> Bool { byte == tab || (0x20...0x7E).contains(byte) || byte >= 0x80 }

    private static let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), space = UInt8(ascii: " "), tab = UInt8(ascii: "\t")
}
#endif
