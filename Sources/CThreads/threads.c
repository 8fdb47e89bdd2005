#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "CThreads.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

// Starting a thread on another processor needs glibc's pthread_attr_setaffinity_np (musl and
// bionic have no such call); elsewhere threads start where the scheduler puts them.
#if defined(__linux__) && defined(__GLIBC__)
#define PEERNOTE_START_ELSEWHERE 1
#else
#define PEERNOTE_START_ELSEWHERE 0
#endif

void peernote_flag_raise(int *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

bool peernote_flag_is_raised(const int *flag) {
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

int peernote_counter_next(int *counter) {
    return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

struct peernote_latch {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    bool open;
};

peernote_latch_t peernote_latch_create(void) {
    struct peernote_latch *latch = malloc(sizeof *latch);
    if (!latch) return NULL;
    if (pthread_mutex_init(&latch->lock, NULL) != 0) {
        free(latch);
        return NULL;
    }
    if (pthread_cond_init(&latch->opened, NULL) != 0) {
        pthread_mutex_destroy(&latch->lock);
        free(latch);
        return NULL;
    }
    latch->open = false;
    return latch;
}

void peernote_latch_open(peernote_latch_t latch) {
    pthread_mutex_lock(&latch->lock);
    latch->open = true;
    pthread_cond_broadcast(&latch->opened);
    pthread_mutex_unlock(&latch->lock);
}

void peernote_latch_wait(peernote_latch_t latch) {
    pthread_mutex_lock(&latch->lock);
    while (!latch->open) pthread_cond_wait(&latch->opened, &latch->lock);
    pthread_mutex_unlock(&latch->lock);
}

void peernote_latch_destroy(peernote_latch_t latch) {
    pthread_cond_destroy(&latch->opened);
    pthread_mutex_destroy(&latch->lock);
    free(latch);
}

int peernote_processor_count(void) {
#if PEERNOTE_START_ELSEWHERE
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
        int n = CPU_COUNT(&allowed);
        if (n > 0) return n;
    }
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

// A job: what to run, and whether it has finished (guarded by `lock`).
struct peernote_thread {
    void (*body)(void *);
    void *context;
    bool done;
    // Set when the job has a thread of its own (the helper was busy), which the join waits for.
    bool own_thread;
    pthread_t thread;
};

// One helper thread, started on first use and kept: later jobs reuse it (a parked thread woken
// again goes back to its own processor, which a new thread does not). A job that comes while
// it is busy gets a thread of its own. All fields are guarded by `lock`.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_posted = PTHREAD_COND_INITIALIZER;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER;
static bool helper_started;
static bool helper_busy;
static struct peernote_thread *posted;
static bool fork_handler_installed;

// fork: the forking thread holds `lock` across the fork, so that the child's copy is in a known
// state; the child has no helper thread (it starts its own when it needs one).
static void before_fork(void) {
    pthread_mutex_lock(&lock);
}

static void after_fork_in_parent(void) {
    pthread_mutex_unlock(&lock);
}

static void after_fork_in_child(void) {
    // No thread of the parent waits on these in the child: made anew.
    pthread_cond_init(&job_posted, NULL);
    pthread_cond_init(&job_done, NULL);
    helper_started = false;
    helper_busy = false;
    posted = NULL;
    pthread_mutex_unlock(&lock);
}

#if PEERNOTE_START_ELSEWHERE
// The processors the process may use, for a thread started elsewhere to go back to.
struct start {
    void *(*main)(void *);
    void *argument;
    cpu_set_t allowed;
};

static void *start_elsewhere_main(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    // Started away from its creator's processor; from now on the scheduler may move it
    // anywhere the process may run (it stays where it is unless there is a reason to move).
    (void)pthread_setaffinity_np(pthread_self(), sizeof s.allowed, &s.allowed);
    return s.main(s.argument);
}
#endif

// pthread_create, but on Linux on another processor than the caller's when the process may
// use more than one (see the header). Returns 0 or an error number.
static int create_on_another_processor(pthread_t *thread, void *(*main)(void *), void *argument) {
#if PEERNOTE_START_ELSEWHERE
    struct start *s = malloc(sizeof *s);
    if (s != NULL && sched_getaffinity(0, sizeof s->allowed, &s->allowed) == 0) {
        cpu_set_t elsewhere = s->allowed;
        int here = sched_getcpu();
        if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &elsewhere);
        pthread_attr_t attr;
        if (CPU_COUNT(&elsewhere) > 0 && pthread_attr_init(&attr) == 0) {
            int result = pthread_attr_setaffinity_np(&attr, sizeof elsewhere, &elsewhere);
            if (result == 0) {
                s->main = main;
                s->argument = argument;
                result = pthread_create(thread, &attr, start_elsewhere_main, s);
            }
            pthread_attr_destroy(&attr);
            if (result == 0) return 0;
        }
    }
    free(s);
#endif
    return pthread_create(thread, NULL, main, argument);
}

// The thread starts with the signals a program handles blocked (it inherits the caller's mask),
// so that they go to the program's own threads, as Dispatch's workers do; the ones a fault
// raises in the faulting thread stay open (blocked, the kernel would kill the process without
// running the Swift runtime's backtrace or any crash handler), with SIGPIPE and SIGPROF, which
// Dispatch also leaves open.
static int create_thread(pthread_t *thread, void *(*main)(void *), void *argument) {
    static const int open_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT, SIGPIPE, SIGPROF};
    sigset_t mask, previous;
    sigfillset(&mask);
    for (size_t i = 0; i < sizeof open_signals / sizeof *open_signals; i++) sigdelset(&mask, open_signals[i]);
    bool masked = pthread_sigmask(SIG_SETMASK, &mask, &previous) == 0;
    int result = create_on_another_processor(thread, main, argument);
    if (masked) (void)pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return result;
}

static void *helper_main(void *unused) {
    (void)unused;
#if defined(__APPLE__)
    pthread_setname_np("peernote helper");
#elif defined(__linux__) && defined(__GLIBC__)
    pthread_setname_np(pthread_self(), "peernote helper");
#endif
    pthread_mutex_lock(&lock);
    for (;;) {
        while (posted == NULL) pthread_cond_wait(&job_posted, &lock);
        struct peernote_thread *job = posted;
        posted = NULL;
        pthread_mutex_unlock(&lock);
        job->body(job->context);
        pthread_mutex_lock(&lock);
        // Free again in the same step as the job is done: a caller that starts its next job
        // right after the join finds the helper free.
        job->done = true;
        helper_busy = false;
        pthread_cond_broadcast(&job_done);
    }
    return NULL;
}

static void *own_thread_main(void *p) {
    struct peernote_thread *job = p;
    job->body(job->context);
    pthread_mutex_lock(&lock);
    job->done = true;
    pthread_cond_broadcast(&job_done);
    pthread_mutex_unlock(&lock);
    return NULL;
}

peernote_thread_t peernote_thread_start(void (*body)(void *context), void *context) {
    struct peernote_thread *job = calloc(1, sizeof *job);
    if (job == NULL) return NULL;
    job->body = body;
    job->context = context;
    pthread_mutex_lock(&lock);
    if (!fork_handler_installed) {
        fork_handler_installed = pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child) == 0;
    }
    if (!helper_busy && !helper_started && fork_handler_installed) {
        pthread_t helper;
        if (create_thread(&helper, helper_main, NULL) == 0) {
            pthread_detach(helper);
            helper_started = true;
        }
    }
    if (helper_started && !helper_busy) {
        helper_busy = true;
        posted = job;
        pthread_cond_signal(&job_posted);
        pthread_mutex_unlock(&lock);
        return job;
    }
    pthread_mutex_unlock(&lock);
    if (create_thread(&job->thread, own_thread_main, job) != 0) {
        free(job);
        return NULL;
    }
    job->own_thread = true;
    return job;
}

void peernote_thread_join(peernote_thread_t job) {
    pthread_mutex_lock(&lock);
    while (!job->done) pthread_cond_wait(&job_done, &lock);
    pthread_mutex_unlock(&lock);
    if (job->own_thread) (void)pthread_join(job->thread, NULL);
    free(job);
}
