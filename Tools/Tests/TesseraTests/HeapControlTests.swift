import CHeapControl
import Testing

/// The allocator controls `tessera serve` relies on (docs/RELIABILITY.md, soak): on glibc they must reach
/// the real allocator, not compile to the no-op fallback.
@Suite("Heap control (glibc)")
struct HeapControlTests {
    #if canImport(Glibc)
    @Test("mallopt takes the mmap threshold; mallinfo2 sees a live block of 8 MiB and its release")
    func glibcStatistics() {
        #expect(tessera_heap_set_mmap_threshold(1 << 20) == 1)
        let before = tessera_heap_statistics_now()
        let size = 8 << 20
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        block.initializeMemory(as: UInt8.self, repeating: 1, count: size)
        let during = tessera_heap_statistics_now()
        block.deallocate()
        let after = tessera_heap_statistics_now()
        // Other threads of the test process allocate too, so compare with margins far below the block.
        #expect(during.mapped >= before.mapped + size / 2, "an 8 MiB block above the 1 MiB threshold is mapped on its own")
        #expect(during.inUse >= size)
        #expect(after.mapped + size / 2 <= during.mapped, "freeing it unmaps it")
        _ = tessera_heap_trim()
    }
    #endif
}
