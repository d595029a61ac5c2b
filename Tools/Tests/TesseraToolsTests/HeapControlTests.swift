import CHeapControl
import Foundation
import Testing
import TesseraTestSupport

/// The allocator controls `tessera serve` relies on (docs/RELIABILITY.md, soak): on glibc they must reach
/// the real allocator, not compile to the no-op fallback (which reports zeros and refuses every setting).
@Suite("Heap control (glibc)")
struct HeapControlTests {
    #if canImport(Glibc)
    @Test("mallopt takes the mmap threshold, the top pad and the arena limit; mallinfo2 reports live bytes")
    func reachesGlibc() {
        #expect(tessera_heap_set_mmap_threshold(1 << 20) == 1)
        #expect(tessera_heap_set_top_pad(32 << 20) == 1)
        #expect(tessera_heap_set_top_pad(128 << 10) == 1, "back to glibc's default, 128 KiB")
        // glibc's own default on this machine, so the rest of the test process is unaffected.
        #expect(tessera_heap_set_arena_limit(Int32(8 * ProcessInfo.processInfo.activeProcessorCount)) == 1)
        let block = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 1, count: 1 << 16)
        // Which arena or mapping serves a block depends on the process's history, so only the total is
        // checked: a live 64 KiB block means at least that much in use.
        #expect(tessera_heap_statistics_now().inUse >= 1 << 16)
        block.deallocate()
    }
    #endif
}
