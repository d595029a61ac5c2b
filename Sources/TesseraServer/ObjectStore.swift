#if Serving
import Foundation
@_spi(Internal) import TesseraImaging
import Tessera

/// An object's version at one moment, and its bytes when finding out the version downloaded them.
struct ObjectVersion: Sendable {
    /// Text that changes whenever the object does: an S3 object's ETag (and version id), an HTTP
    /// origin's bytes' digest. Part of the response key and the table's source id.
    let tag: String
    /// The bytes, when they came with the version (a first GET, a `200` to a conditional one).
    let data: Data?
    /// When the store last confirmed the version (`ContinuousClock.now`), when it answers from that check
    /// (``ObjectStore/recentVersion(of:within:)``).
    var confirmedAt: ContinuousClock.Instant? = nil
    /// The object's `Last-Modified` in seconds since 1970, when it came with the bytes (a check that answers
    /// from memory does not keep it: the answer cached for the version does).
    var lastModified: Int? = nil
}

/// Originals that are fetched rather than `stat`ed: an S3 bucket or a private HTTP origin.
///
/// A request for one of its objects first asks ``current(_:recheckSeconds:)`` for the version (cheap
/// when a recent check answers for it), then looks in memory and the preset's table under that
/// version, and only on a miss reads the bytes (``bytes(of:version:)``, unless the version came with them).
protocol ObjectStore: Sendable {
    /// The source's name, as in `@name`.
    var name: String { get }
    /// The version of `key` now. A check younger than `recheckSeconds` answers without a request;
    /// an older one is revalidated (a conditional request where the store has one); an object never
    /// seen is read whole.
    func current(_ key: String, recheckSeconds: Double) async throws(ServiceError) -> ObjectVersion
    /// The version of `key` when a check younger than `seconds` knows it, without waiting (the
    /// memory-hit path on the event loop); `nil` otherwise.
    func recentVersion(of key: String, within seconds: Double) -> ObjectVersion?
    /// The bytes of `key` at version `tag`: kept from a recent read, or read now. When the object has
    /// changed since `tag` was learnt, throws ``ServiceError/Code/sourceChanged`` (the request starts
    /// again and learns the new version), so that no pixels are ever kept under another version's tag.
    func bytes(of key: String, version tag: String) async throws(ServiceError) -> Data
    /// Forgets everything the store keeps of `key`: its version and its bytes (memory and disk), so
    /// that its next request reads it from the store again. Whether a copy of its bytes was kept.
    func forget(_ key: String) async -> Bool
    /// Closes connections; called once no request runs.
    func shutdown() async
}

/// The versions an ``ObjectStore`` has seen, with when each was last confirmed (``SourceChecks``: at
/// most `capacity` objects, the least recently confirmed forgotten first; the next request for one asks
/// its store again).
struct VersionTable: Sendable {
    struct Seen: Sendable {
        var tag: String
        var checkedAt: ContinuousClock.Instant
    }

    private let seen: SourceChecks<Seen>

    init(capacity: Int = 100_000) { seen = SourceChecks(capacity: capacity) }

    func get(_ key: String) -> Seen? { seen.get(key) }

    /// Forgets the version of `key`.
    func forget(_ key: String) { seen.forget(key) }

    /// Records that `key` is at version `tag` now.
    func record(_ key: String, tag: String) { seen.record(key, Seen(tag: tag, checkedAt: .now)) }

    /// The version of `key` when it was confirmed less than `seconds` ago.
    func recent(_ key: String, within seconds: Double) -> ObjectVersion? {
        guard let known = get(key), Self.isRecent(known, within: seconds) else { return nil }
        return ObjectVersion(tag: known.tag, data: nil, confirmedAt: known.checkedAt)
    }

    /// Whether `entry` was confirmed less than `seconds` ago.
    static func isRecent(_ entry: Seen, within seconds: Double) -> Bool {
        seconds > 0 && ContinuousClock.now - entry.checkedAt < .seconds(seconds)
    }
}

extension ObjectVersion {
    /// The bytes of this read of `key` when it is of version `tag`; ``ServiceError/Code/sourceChanged`` when
    /// the object changed since `tag` was learnt.
    func bytes(of key: String, expecting tag: String) throws(ServiceError) -> Data {
        guard self.tag == tag, let data else { throw ServiceError(.sourceChanged, "the object \(key) changed while it was read") }
        return data
    }

    /// The first 12 bytes of SHA-256 of `data`, in hex: the version of bytes that carry no validator.
    static func digest(of data: Data) -> String {
        hexDigest(data, bytes: 12)
    }
}
#endif
