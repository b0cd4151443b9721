/* oxiblosc's own declarations for C-Blosc2 3.3.2's internal-header tests
   (written for our libblosc2.so, not copied from C-Blosc2).

   The C-visible head of a context (blosc2_context, made by
   blosc2_create_cctx / blosc2_create_dctx, or a super-chunk's cctx / dctx).
   Only these fields are declared: the library's own state follows them, so
   a context is only ever used through the pointer the library hands out
   (never allocated, copied or embedded by the caller). */
#ifndef OXIBLOSC_PEER_CONTEXT_H
#define OXIBLOSC_PEER_CONTEXT_H

#include <stdint.h>
#include "blosc2.h"
#include "threading.h"

/* A pool of worker threads, shared by every context that runs with the same
   number of threads (oxiblosc runs all of them on the engine's one
   process-wide pool of that size).  Opaque: compare the pointers.  It lives
   while a context is attached to it. */
struct blosc_shared_pool;

struct blosc2_context_s {
  /* Threads the context runs with (from its cparams / dparams, then from
     new_nthreads).  Read-only for callers. */
  int16_t nthreads;
  /* Write a thread count here to change it: the context's next call
     (compress, decompress, getitem, or a super-chunk call for the
     super-chunk's cctx / dctx) runs with it and moves to its pool. */
  int16_t new_nthreads;
  /* Compression context: whether chunks are made with a dictionary.
     Decompression context: whether the last chunk decoded had one. */
  int use_dict;
  /* The shared pool the context is attached to: NULL while it runs with
     one thread (or before its first call with more). */
  struct blosc_shared_pool *thread_pool;
  /* Compression context: the filter of each pipeline slot and its meta
     (for BLOSC_SHUFFLE a non-zero meta is the element size it shuffles
     by), from the cparams it was made with.  Write them to change the
     pipeline: the context's next blosc2_compress_ctx (or
     blosc2_vlcompress_ctx) compresses with them, and
     blosc2_ctx_get_cparams returns them. */
  uint8_t filters[BLOSC2_MAX_FILTERS];
  uint8_t filters_meta[BLOSC2_MAX_FILTERS];
  /* ... the library's own fields follow. */
};

#include "b2nd.h"

/* The C-visible head of a b2nd context (b2nd.h declares b2nd_context_t
   opaque), as b2nd_create_ctx fills it: the array's geometry and dtype,
   the context's own storage (cparams, dparams and urlpath copied from the
   caller's) and its metalayers.  Read-only for callers; the library's own
   state follows. */
struct b2nd_context_s {
  int8_t ndim;
  int64_t shape[B2ND_MAX_DIM];
  int32_t chunkshape[B2ND_MAX_DIM];
  int32_t blockshape[B2ND_MAX_DIM];
  char *dtype;
  int8_t dtype_format;
  blosc2_storage *b2_storage;
  blosc2_metalayer metalayers[B2ND_MAX_METALAYERS];
  int32_t nmetalayers;
  /* ... the library's own fields follow. */
};

#endif
