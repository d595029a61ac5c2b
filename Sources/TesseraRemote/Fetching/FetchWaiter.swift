import TesseraTables

/// What waits for a URL's data job (the requests of ``FetchJobs``' pool of data jobs).
enum DataWaiter: Sendable, Hashable {
    /// A caller of ``ImageManager/data(for:priority:progress:)``, with its priority.
    case bytes(FetchPriority)
    /// The image job of a variant: urgent while one of its own callers is.
    case image(ImageKey)
    /// A prefetch onto disk (a hold: nobody awaits it).
    case prefetch
}

/// What waits for a variant's image job (the requests of ``FetchJobs``' pool of image jobs).
enum ImageWaiter: Sendable, Hashable {
    /// A caller of ``ImageManager/image(for:progress:)``, with its priority.
    case caller(FetchPriority)
    /// A prefetch into memory, when there is no disk cache (a hold: nobody awaits it).
    case prefetch
}
