#ifndef PEERNOTE_CTHREADS_H
#define PEERNOTE_CTHREADS_H

#include <stdbool.h>

/// A flag that one thread raises and others read, without locks or system calls (C11 atomics,
/// release and acquire order). The caller owns the memory `flag` points to; it starts lowered
/// (zero).
void peernote_flag_raise(int *flag);
bool peernote_flag_is_raised(const int *flag);

/// Returns `*counter`, then adds one to it, atomically (relaxed order: for handing out indices).
int peernote_counter_next(int *counter);

/// A gate that one thread opens, once, and another waits at until it is open. Everything the
/// opener wrote before `peernote_latch_open` is visible to a waiter after `peernote_latch_wait`.
typedef struct peernote_latch *peernote_latch_t;

/// A closed latch (NULL when no memory could be had).
peernote_latch_t peernote_latch_create(void);

/// Opens the latch (again: no effect) and wakes whoever waits at it.
void peernote_latch_open(peernote_latch_t latch);

/// Returns once the latch is open (at once if it is).
void peernote_latch_wait(peernote_latch_t latch);

/// Releases the latch; no thread may wait at it or open it any more.
void peernote_latch_destroy(peernote_latch_t latch);

/// How many processors the process may run on (its affinity where the system says; at least 1).
int peernote_processor_count(void);

/// Work started by `peernote_thread_start`.
typedef struct peernote_thread *peernote_thread_t;

/// Runs `body(context)` on another thread and returns the job, for `peernote_thread_join`
/// (NULL when no thread could be had: then `body` was not called, and the caller does the
/// work itself).
///
/// The work goes to a helper thread, started on first use and kept for later jobs, or to a
/// thread of its own when the helper is busy. On Linux (glibc) a new thread starts on another
/// processor than the caller's, when the process may use more than one, and then may run on
/// any of them again. Left to itself the scheduler puts a new thread on its creator's
/// processor and moves it only at its next balancing, a few milliseconds later: on virtual
/// machines, whose idle processors it takes for busy, the two halves of a short job then ran
/// one after the other. A child of `fork` starts a helper of its own.
peernote_thread_t peernote_thread_start(void (*body)(void *context), void *context);

/// Waits for the job to finish and releases it. Everything the job wrote is visible to the
/// caller afterwards.
void peernote_thread_join(peernote_thread_t job);

#endif
