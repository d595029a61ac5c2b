#if Serving
import Foundation
import NIOCore
import NIOHTTP1
@_spi(Internal) import TesseraImaging

/// The memory hits one event loop has answered, kept ready to write again: the response head (its headers
/// made once, `Date` renewed once a second) and the cached body, by request target and by the format the
/// request's `Accept` chose. The ``MemoryHitHandler`` asks here first, so a thumbnail asked for again on
/// the same loop is answered without resolving the request, parsing `Accept`, building its cache key,
/// taking the response cache's lock or making its headers.
///
/// An answer is given again only while the full path would give the same one:
/// - its source's last check is still trusted: `--source-check-interval` from a file's last `stat` (under
///   the root or in a directory source) or from when a named source's store last confirmed the object's
///   version; with an interval of 0 nothing is kept, so every hit checks its source; remote URLs always
///   take the full path;
/// - no entry has left the response cache since the answer was kept (the cache counts departures; when
///   the count moved, the loop forgets every answer, so it never holds a body the cache let go of beyond
///   its next request);
/// - the request has no `If-None-Match` (the full path answers those, with a `304` when they match).
///
/// Which format an `Accept` chooses (``OutputChoice/bestAccepted(_:)``) is worked out once per distinct
/// header text. Both maps are bounded: when one is full it starts again empty.
///
/// One instance per event loop (``Registry``), used only on that loop, so nothing here takes a lock.
final class HotAnswers {
    /// What selects an answer: the request target as sent (path and query) and the format `Accept` chose.
    struct Key: Hashable {
        let target: String
        let accepted: ImageFileFormat?
    }

    /// A memory hit, ready to write again.
    struct Answer {
        /// Status 200 with the route's headers (``ImageRoutes/forEachField(of:_:)``), `Content-Length`,
        /// `Date` (of ``second``) and `Server`: what ``MemoryHitHandler`` writes for a memory hit.
        fileprivate(set) var head: HTTPResponseHead
        fileprivate(set) var second: Int
        /// The response cache's entry: its body is written as it is, and ``ImageService/ok(_:outcome:)``
        /// counts each hit from it.
        let entry: ResponseCache.Entry
        /// Until when (``CheckClock``) the source's check is trusted.
        let reusableUntil: UInt64
        /// The request's path and route, for its log line and metrics.
        let path: String
        let route: ImageService.Route
    }

    /// Answers kept at most (per loop).
    static let capacity = 16_384
    /// Distinct `Accept` texts whose choice is kept at most (per loop).
    static let acceptCapacity = 64

    private let responses: ResponseCache
    private var answers: [Key: Answer] = [:]
    private var choices: [String: ImageFileFormat?] = [:]
    /// ``ResponseCache/departureCount`` when ``answers`` was last found valid.
    private var departures: Int
    private var date = (second: 0, text: "")

    init(responses: ResponseCache) {
        self.responses = responses
        departures = responses.departureCount
    }

    /// The format `accept` chooses (AVIF, WebP, or `nil` for JPEG or PNG), worked out once per text.
    func accepted(_ accept: String?) -> ImageFileFormat? {
        guard let accept else { return nil }
        if let known = choices[accept] { return known }
        if choices.count >= Self.acceptCapacity { choices.removeAll(keepingCapacity: true) }
        let choice = OutputChoice.bestAccepted(accept)
        choices[accept] = choice
        return choice
    }

    /// The answer kept for `key`, if it may still be given; its `Date` renewed when the second changed.
    func answer(_ key: Key) -> Answer? {
        let departed = responses.departureCount
        if departed != departures {
            answers.removeAll(keepingCapacity: true)
            departures = departed
            return nil
        }
        guard let answer = answers[key] else { return nil }
        guard CheckClock.now() < answer.reusableUntil else {
            answers[key] = nil
            return nil
        }
        let second = time(nil)
        guard answer.second != second else { return answer }
        let text = dateText(second)
        answers[key]?.head.headers.replaceOrAdd(name: "Date", value: text)
        answers[key]?.second = second
        return answers[key]
    }

    /// Keeps `image` (a memory hit of a file source whose check is trusted until `reusableUntil`) for
    /// `key`, unless an entry left the response cache since `departuresBefore` (``responseDepartures``,
    /// read before the lookup that found `image`) was read; returns the head to write for it.
    func keep(_ image: ImageService.ImageResponse, for key: Key, reusableUntil: UInt64, path: String, route: ImageService.Route,
              departuresBefore: Int) -> HTTPResponseHead {
        let second = time(nil)
        let head = Self.head(of: image, date: dateText(second))
        let departed = responses.departureCount
        guard departed == departuresBefore else { return head }
        if departed != departures {
            answers.removeAll(keepingCapacity: true)
            departures = departed
        }
        if answers.count >= Self.capacity { answers.removeAll(keepingCapacity: true) }
        let entry = ResponseCache.Entry(body: image.bodyBuffer, contentType: image.contentType, etag: image.etag, integrity: image.integrity)
        answers[key] = Answer(head: head, second: second, entry: entry, reusableUntil: reusableUntil, path: path, route: route)
        return head
    }

    /// The response cache's departure count now (read it before a lookup whose answer may be kept).
    var responseDepartures: Int { responses.departureCount }

    /// The head of an image answer: the route's fields, `Content-Length` (not on a `304`), `Date` and `Server`.
    static func head(of image: ImageService.ImageResponse, date: String) -> HTTPResponseHead {
        var headers = HTTPHeaders()
        headers.reserveCapacity(9)
        ImageRoutes.forEachField(of: image) { headers.add(name: $0.rawName, value: $1) }
        if image.status != 304 { headers.add(name: "Content-Length", value: String(image.bodyBuffer.readableBytes)) }
        headers.add(name: "Date", value: date)
        headers.add(name: "Server", value: ImageServer.serverName)
        return HTTPResponseHead(version: .http1_1, status: image.status == 304 ? .notModified : .ok, headers: headers)
    }

    /// The `Date` text of `second` (this loop's copy of ``HTTPDate``).
    func dateText(_ second: Int) -> String {
        if date.second != second { date = (second, HTTPDate.text(second)) }
        return date.text
    }

    /// One ``HotAnswers`` per event loop of a listener.
    final class Registry: Sendable {
        private let loops = LockedValue([ObjectIdentifier: NIOLoopBound<HotAnswers>]())

        /// The answers of `eventLoop` (made on first use); call on that loop.
        func answers(on eventLoop: any EventLoop, responses: ResponseCache) -> HotAnswers {
            loops.withLock { loops in
                let id = ObjectIdentifier(eventLoop)
                if let known = loops[id] { return known.value }
                let made = HotAnswers(responses: responses)
                loops[id] = NIOLoopBound(made, eventLoop: eventLoop)
                return made
            }
        }
    }
}
#endif
