import Foundation

/// What a data job hands its waiters: the bytes of a URL, and whether they came from the disk cache
/// (a disk copy may be corrupt: whoever fails to decode it removes it and asks for the bytes again, once).
struct FetchedData: Sendable {
    var data: Data
    var fromDisk: Bool
}
