import CHeapControl
import Foundation
@_spi(Internal) import TesseraCore

/// How the commands set glibc's allocator for their kind of work. Linux/glibc only; elsewhere nothing.
enum HeapPolicy {
    /// glibc serves blocks of 128 kB and more with their own `mmap`, returned to the system on `free`, but
    /// after freeing such a block it raises that threshold to the block's size (up to 32 MB). From then on
    /// a server's decoded sources and resize buffers (1–33 MB each) come from the heap arenas, which
    /// fragment under mixed sizes and rarely shrink: RSS climbs for hours (docs/RELIABILITY.md, soak). A
    /// fixed threshold of 1 MB maps a bitmap-sized block on its own whenever an arena would have to grow for
    /// it (below: the top pad).
    ///
    /// glibc also gives each thread that allocates under contention an arena of its own, up to 8 per core;
    /// every arena keeps its own free space, and under the soak the free space of all of them grew
    /// steadily after the caches were full (4 → 63 MiB in 5 minutes) while the live bytes stayed level.
    /// One arena per core holds that free space in fewer, reused places; glibc's own `MALLOC_ARENA_MAX`,
    /// when set, is left to decide.
    ///
    /// Setting the threshold also fixes glibc's trim threshold at its 128 kB default: every free that leaves
    /// more than that at an arena's top gave it back to the system, and the next request's file bytes and
    /// row buffers faulted fresh zeroed pages in again (235 minor faults a cold thumbnail of the corpus
    /// photos). Each arena keeps up to 16 MB (and the top pad) free at its top instead; the trim every 10 s
    /// (`returnFreedHeapPages`) gives the main arena's back.
    ///
    /// The threshold decides only when an arena must grow: a block is cut from the free space at the
    /// arena's top whenever that is large enough. With glibc's default top pad (128 kB) an arena grows by
    /// little more than each request, so the top was rarely large enough for a source's bytes, a PNG's
    /// pixels or a progressive JPEG's coefficients (1–4 MB on the corpus photos), and each such block
    /// was a mapping of its own, faulted in a page at a time (about 135 minor faults a cold thumbnail).
    /// A top pad of 32 MB grows an arena in steps of 32 MB, from which those blocks are then cut and to
    /// which they return: about 40 faults a cold thumbnail, 3–5 % less CPU (docs/PERFORMANCE.md, "The
    /// heap"). The price is resident memory: an arena other than the main one keeps up to the pad plus the
    /// trim threshold at its top (`malloc_trim` returns only the main arena's), and under the soak RssAnon
    /// was 24–29 MiB higher than with glibc's pad, a constant, rising no faster (docs/RELIABILITY.md, runs M
    /// and N).
    ///
    /// glibc's own settings, when given, decide instead: `GLIBC_TUNABLES` or `MALLOC_MMAP_THRESHOLD_` the
    /// threshold, `MALLOC_TOP_PAD_` the pad, `MALLOC_TRIM_THRESHOLD_` the trim threshold, `MALLOC_ARENA_MAX` the
    /// arenas.
    static func configureForServing() {
        let environment = ProcessInfo.processInfo.environment
        if environment["GLIBC_TUNABLES"] == nil, environment["MALLOC_MMAP_THRESHOLD_"] == nil {
            _ = tessera_heap_set_mmap_threshold(1 << 20)
        }
        if environment["GLIBC_TUNABLES"] == nil, environment["MALLOC_TOP_PAD_"] == nil {
            _ = tessera_heap_set_top_pad(32 << 20)
        }
        if environment["MALLOC_TRIM_THRESHOLD_"] == nil {
            _ = tessera_heap_set_trim_threshold(16 << 20)
        }
        if environment["MALLOC_ARENA_MAX"] == nil {
            _ = tessera_heap_set_arena_limit(Int32(clamping: ParallelismLimit.coreCount))
        }
    }

    /// A batch of images (`table ingest`, `thumbnail`, `bench ingest`) allocates and frees the same few
    /// buffer sizes once per image: the file's bytes, the decoder's planes and output, the resampled
    /// thumbnail. With glibc's defaults, blocks of 128 kB and more get an `mmap` of their own until the
    /// first free raises that threshold, and free space at the top of an arena above twice the threshold
    /// goes back to the system; either way the next image faults fresh zeroed pages in again (16 % of
    /// `table ingest`'s time, in the kernel, on 640x480 photos). Blocks up to 32 MB (glibc's own ceiling
    /// for its raised threshold) therefore come from the arenas, and each arena keeps up to 64 MB free at
    /// its top: about 8 % more images per second on such photos, at the price of that much resident
    /// memory at most per arena. glibc's environment settings, when given, are left to decide.
    static func configureForBatch() {
        let environment = ProcessInfo.processInfo.environment
        guard environment["GLIBC_TUNABLES"] == nil, environment["MALLOC_MMAP_THRESHOLD_"] == nil,
              environment["MALLOC_TRIM_THRESHOLD_"] == nil else { return }
        _ = tessera_heap_set_mmap_threshold(32 << 20)
        _ = tessera_heap_set_trim_threshold(64 << 20)
    }
}
