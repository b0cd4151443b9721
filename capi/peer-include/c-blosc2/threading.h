/* oxiblosc's own declarations for C-Blosc2 3.3.2's internal-header tests
   (written for our libblosc2.so, not copied from C-Blosc2).

   C-Blosc2's test programs start their threads through the blosc2_pthread_*
   names.  On POSIX systems those are the system's pthreads (as in
   C-Blosc2), so nothing here needs our library; our library itself runs its
   threads on the engine's pools (see context.h). */
#ifndef OXIBLOSC_PEER_THREADING_H
#define OXIBLOSC_PEER_THREADING_H

#if defined(_WIN32)
#  error "oxiblosc's peer headers are for POSIX systems"
#endif

#include <pthread.h>

#define blosc2_pthread_t pthread_t
#define blosc2_pthread_attr_t pthread_attr_t
#define blosc2_pthread_create(thread, attr, start, arg) pthread_create((thread), (attr), (start), (arg))
#define blosc2_pthread_join(thread, ret) pthread_join((thread), (ret))
#define blosc2_pthread_mutex_t pthread_mutex_t
#define blosc2_pthread_mutex_init(m, attr) pthread_mutex_init((m), (attr))
#define blosc2_pthread_mutex_destroy(m) pthread_mutex_destroy((m))
#define blosc2_pthread_mutex_lock(m) pthread_mutex_lock((m))
#define blosc2_pthread_mutex_unlock(m) pthread_mutex_unlock((m))
#define blosc2_pthread_cond_t pthread_cond_t
#define blosc2_pthread_cond_init(c, attr) pthread_cond_init((c), (attr))
#define blosc2_pthread_cond_destroy(c) pthread_cond_destroy((c))
#define blosc2_pthread_cond_wait(c, m) pthread_cond_wait((c), (m))
#define blosc2_pthread_cond_signal(c) pthread_cond_signal((c))
#define blosc2_pthread_cond_broadcast(c) pthread_cond_broadcast((c))

#endif
