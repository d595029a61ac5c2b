#ifndef TESSERA_GUARD_H
#define TESSERA_GUARD_H

#include <stddef.h>
#include <stdint.h>

/// Installs Tessera's SIGBUS handler once per process (thread-safe, idempotent). Returns 0 on success.
///
/// A memory-mapped table file that another program truncates makes every later access to the
/// vanished pages raise SIGBUS, which would kill the process. For addresses inside a registered
/// range, the handler maps a private zero page over the faulting page and returns, so the access
/// completes (reading zeros) and the fault is counted for that range; the table then treats its
/// mapping as damaged. Faults outside every registered range go to the previously installed handler
/// (or the default action), so other code keeps its behaviour.
int tessera_guard_install(void);

/// Registers `[base, base + length)` as a guarded mapping. Returns a handle (>= 0), or -1 when the
/// registry is full (the mapping then works unguarded).
int tessera_guard_register(void *base, size_t length);

/// Forgets a registered range (call before unmapping it).
void tessera_guard_unregister(int handle);

/// How many faults were absorbed in the range since it was registered.
uint64_t tessera_guard_faults(int handle);

#endif
