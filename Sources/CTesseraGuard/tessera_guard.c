// Tessera's SIGBUS guard for memory-mapped table files; see include/tessera_guard.h.
#define _GNU_SOURCE
#include "tessera_guard.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TESSERA_GUARD_RANGES 1024

static _Atomic uintptr_t range_base[TESSERA_GUARD_RANGES];
static _Atomic size_t range_length[TESSERA_GUARD_RANGES];
static _Atomic uint64_t range_faults[TESSERA_GUARD_RANGES];
static _Atomic int range_used[TESSERA_GUARD_RANGES];

static struct sigaction previous_action;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_result = -1;
static uintptr_t page_size = 4096;

static void tessera_sigbus(int sig, siginfo_t *info, void *context) {
    uintptr_t address = (uintptr_t)info->si_addr;
    for (int i = 0; i < TESSERA_GUARD_RANGES; i++) {
        uintptr_t base = atomic_load_explicit(&range_base[i], memory_order_acquire);
        if (base == 0) continue;
        size_t length = atomic_load_explicit(&range_length[i], memory_order_relaxed);
        if (address < base || address >= base + length) continue;
        // mmap is a plain system call; replacing the vanished file page with a private zero page
        // lets the faulting instruction complete when the handler returns.
        void *page = (void *)(address & ~(page_size - 1));
        if (mmap(page, page_size, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
            atomic_fetch_add_explicit(&range_faults[i], 1, memory_order_release);
            return;
        }
        break;
    }
    // Not a guarded table page: behave as if this handler were not installed.
    if (previous_action.sa_flags & SA_SIGINFO) {
        if (previous_action.sa_sigaction != NULL) { previous_action.sa_sigaction(sig, info, context); return; }
    } else if (previous_action.sa_handler == SIG_IGN) {
        return;
    } else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != NULL) {
        previous_action.sa_handler(sig);
        return;
    }
    // Default action: restore it; returning re-executes the access, which now terminates the process.
    struct sigaction fallback;
    memset(&fallback, 0, sizeof fallback);
    fallback.sa_handler = SIG_DFL;
    sigaction(SIGBUS, &fallback, NULL);
}

static void tessera_install(void) {
    long size = sysconf(_SC_PAGESIZE);
    if (size > 0) page_size = (uintptr_t)size;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = tessera_sigbus;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&action.sa_mask);
    install_result = sigaction(SIGBUS, &action, &previous_action);
}

int tessera_guard_install(void) {
    pthread_once(&install_once, tessera_install);
    return install_result;
}

int tessera_guard_register(void *base, size_t length) {
    if (tessera_guard_install() != 0 || base == NULL || length == 0) return -1;
    for (int i = 0; i < TESSERA_GUARD_RANGES; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&range_used[i], &expected, 1)) {
            atomic_store_explicit(&range_faults[i], 0, memory_order_relaxed);
            atomic_store_explicit(&range_length[i], length, memory_order_relaxed);
            atomic_store_explicit(&range_base[i], (uintptr_t)base, memory_order_release);
            return i;
        }
    }
    return -1;
}

void tessera_guard_unregister(int handle) {
    if (handle < 0 || handle >= TESSERA_GUARD_RANGES) return;
    atomic_store_explicit(&range_base[handle], 0, memory_order_release);
    atomic_store_explicit(&range_length[handle], 0, memory_order_relaxed);
    atomic_store_explicit(&range_used[handle], 0, memory_order_release);
}

uint64_t tessera_guard_faults(int handle) {
    if (handle < 0 || handle >= TESSERA_GUARD_RANGES) return 0;
    return atomic_load_explicit(&range_faults[handle], memory_order_acquire);
}
