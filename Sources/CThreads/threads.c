#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "CThreads.h"

#include <pthread.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sched.h>
#endif

void peernote_flag_raise(int *flag) {
    __atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

bool peernote_flag_is_raised(const int *flag) {
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE) != 0;
}

struct peernote_thread {
    pthread_t thread;
    void (*body)(void *);
    void *context;
#if defined(__linux__)
    bool restore;
    cpu_set_t allowed;
#endif
};

static void *peernote_thread_main(void *p) {
    struct peernote_thread *t = p;
#if defined(__linux__)
    // Started away from the creator's processor; from now on the scheduler may move it
    // anywhere the process may run (it stays where it is unless there is a reason to move).
    if (t->restore) {
        (void)pthread_setaffinity_np(pthread_self(), sizeof t->allowed, &t->allowed);
    }
#endif
    t->body(t->context);
    return NULL;
}

peernote_thread_t peernote_thread_start(void (*body)(void *context), void *context) {
    struct peernote_thread *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->body = body;
    t->context = context;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) {
        free(t);
        return NULL;
    }
#if defined(__linux__)
    if (sched_getaffinity(0, sizeof t->allowed, &t->allowed) == 0) {
        cpu_set_t elsewhere = t->allowed;
        int here = sched_getcpu();
        if (here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &elsewhere);
        if (CPU_COUNT(&elsewhere) > 0 && pthread_attr_setaffinity_np(&attr, sizeof elsewhere, &elsewhere) == 0) {
            t->restore = true;
        }
    }
#endif
    int started = pthread_create(&t->thread, &attr, peernote_thread_main, t);
    pthread_attr_destroy(&attr);
    if (started != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void peernote_thread_join(peernote_thread_t t) {
    (void)pthread_join(t->thread, NULL);
    free(t);
}
