import TesseraImaging

/// How much a request is wanted: five levels, `veryLow` to `veryHigh` (Nuke's `ImageRequest.Priority`,
/// also reachable as `ImageRequest.Priority` in the remote layer), mapped onto the two download lanes of `ImageManager`:
///
/// | Level | Lane | Order in the lane |
/// |---|---|---|
/// | ``veryHigh``, ``high``, ``normal`` (``urgent``) | urgent: several downloads in parallel | higher levels first, then request order |
/// | ``low`` (``prefetch``), ``veryLow`` | slow: one download at a time, only while no urgent download runs or waits | `low` before `veryLow`, then request order |
///
/// The two names the lanes had before the levels, ``urgent`` and ``prefetch``, remain: they are the
/// levels ``normal`` and ``low``. A download shared by several requests takes the highest level among
/// them; changing a level (`ImageTask.priority`) moves a queued download at once, between lanes or
/// within one, and relabels a running one — never a second download.
public enum FetchPriority: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Wanted last: the slow lane, after every ``low`` request.
    case veryLow
    /// Wanted later: the slow lane (``prefetch``).
    case low
    /// Wanted now: the urgent lane (``urgent``). The default.
    case normal
    /// Wanted now, before ``normal`` requests: the urgent lane, ahead of them in its queue.
    case high
    /// Wanted now, before everything else: the urgent lane, first in its queue.
    case veryHigh

    /// Needed now: ``normal``, the urgent lane (several downloads in parallel).
    public static let urgent = FetchPriority.normal
    /// Needed later: ``low``, the slow lane (one download at a time, started only while no urgent
    /// download runs or waits).
    public static let prefetch = FetchPriority.low

    /// Whether the level waits in the urgent lane (``normal`` and above) rather than the slow one.
    public var isUrgent: Bool { self >= .normal }

    /// Orders the levels from ``veryLow`` to ``veryHigh``.
    public static func < (lhs: FetchPriority, rhs: FetchPriority) -> Bool { lhs.rank < rhs.rank }

    private var rank: Int {
        switch self {
        case .veryLow: 0
        case .low: 1
        case .normal: 2
        case .high: 3
        case .veryHigh: 4
        }
    }

    /// Decodes a level by its name; the lane names `"urgent"` and `"prefetch"` decode as ``normal`` and ``low``.
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        switch name {
        case "urgent": self = .normal
        case "prefetch": self = .low
        default:
            guard let level = FetchPriority(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown priority \(name)"))
            }
            self = level
        }
    }
}

extension FetchPriority {
    /// The level of the request the current task works for, when a layer hands the work to another
    /// through an interface that has no priority of its own: ``ImageCache`` sets it (the highest level
    /// among the requests waiting for a source) while it asks its ``SourceImageProviding`` provider, and
    /// `ImageManager`, as a provider, downloads the source at that level. ``normal`` when nobody set it.
    @TaskLocal public static var ofCurrentRequest: FetchPriority = .normal
}
