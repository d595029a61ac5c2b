@_spi(Internal) import TesseraImaging
import TesseraTables
import Foundation

/// The identity of a data job: the image's identity in the caches (its URL, or the URL made from its
/// ``ImageRequest/cacheKey``) and the disk layers its requesters may use. Requests that
/// may not read or write the disk get jobs of their own, so that no request is answered from a layer it
/// skips nor writes one it forbids. Likewise the jobs that may answer with any stale copy, and the
/// background revalidations, are jobs of their own (``StaleUse``).
struct DataKey: Sendable, Hashable {
    /// The identity in the caches (``ImageKey/url``).
    var url: URL
    var readsDisk = true
    var writesDisk = true
    var stale = StaleUse.asOriginAllows
}

/// How a data job may use a stale disk copy.
enum StaleUse: Sendable, Hashable {
    /// As the origin's `stale-while-revalidate` and `stale-if-error` allow (RFC 5861).
    case asOriginAllows
    /// Any stale copy is answered at once and revalidated in the background
    /// (``ImageRequest/CachePolicy/staleWhileRevalidate``); `stale-if-error` as the origin allows.
    case always
    /// A background revalidation: the disk copy is never the answer unless the origin confirms it
    /// (`304`, or the same bytes again); a failure is thrown.
    case revalidating
}

/// The identity of an image job: the variant (``ImageKey``), its data job, and whether the image goes
/// into the memory cache.
struct ImageJobKey: Sendable, Hashable {
    var image: ImageKey
    var data: DataKey
    var writesMemory = true
}

/// One caller's priority, which can change while it waits (``ImageTask/priority``, ``ImageManager/demote(_:)``):
/// the pools hold it by reference, and the scheduler reads it whenever it refreshes a lane.
final class CallerPriority: Sendable {
    private let level: LockedValue<FetchPriority>

    init(_ level: FetchPriority) { self.level = LockedValue(level) }

    /// The level now.
    var value: FetchPriority { level.withLock { $0 } }

    /// Sets the level; returns whether it changed.
    @discardableResult
    func set(_ new: FetchPriority) -> Bool {
        level.withLock { level in
            defer { level = new }
            return level != new
        }
    }
}

/// What waits for a URL's data job (the requests of ``FetchJobs``' pool of data jobs).
enum DataWaiter: Sendable {
    /// A caller of ``ImageManager/data(for:priority:progress:)``, with its priority.
    case bytes(CallerPriority)
    /// The image job of a variant: as urgent as the most urgent of its own callers.
    case image(ImageJobKey)
    /// A prefetch onto disk (a hold: nobody awaits it), at ``/TesseraTables/FetchPriority/low``.
    case prefetch

    var isPrefetch: Bool { if case .prefetch = self { true } else { false } }
}

/// What waits for a variant's image job (the requests of ``FetchJobs``' pool of image jobs).
enum ImageWaiter: Sendable {
    /// A caller of ``ImageManager/image(for:progress:)`` or an ``ImageTask``, with its priority.
    case caller(CallerPriority)
    /// A prefetch into memory, when there is no disk cache (a hold: nobody awaits it), at
    /// ``/TesseraTables/FetchPriority/low``.
    case prefetch

    /// The level this waiter wants.
    var priority: FetchPriority {
        switch self {
        case .caller(let caller): caller.value
        case .prefetch: .low
        }
    }
}
