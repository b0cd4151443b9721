/* b2nd constructors across libraries. `b2nd_make write DIR` makes one
   10 x 7 float64 array (chunks 4 x 4, blocks 2 x 3) in a frame file
   DIR/KIND.b2nd with each of b2nd_from_cbuffer, b2nd_full, b2nd_nans,
   b2nd_zeros, b2nd_empty and b2nd_uninit, reads each back whole with
   b2nd_to_cbuffer and checks its items, and prints, per kind, the return
   code and the special value of chunk 0 (bits 4-6 of header byte 31); then
   the sign of the return code of calls that must fail (a short buffer
   either way; not NaNs of 2-byte items, which b2nd.h says are an error
   and C-Blosc2 3.3.5 makes, nor a NULL fill value, which its b2nd_full
   dereferences: ours refuses both, capi/src/b2nd/tests.rs). `b2nd_make read
   DIR` opens the files with b2nd_open and checks their items again. Then,
   of the in-memory array: b2nd_print_meta, b2nd_expand_dims and
   b2nd_squeeze views, b2nd_concatenate of it after itself, a sparse and an
   orthogonal selection, their shapes and items printed. Built
   against our libblosc2 and C-Blosc2's: each reads what the other wrote,
   and the two print the same lines. Prints OK last when every check
   holds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"
#include "b2nd.h"
#include <stdbool.h>

#define R 10
#define C 7
static const char *kinds[] = {"from_cbuffer", "full", "nans", "zeros", "empty", "uninit"};
#define NKINDS 6

static double item(int i) { return i * 0.25 - 3.0; }

/* Whether the array's items are what KIND makes. */
static int check(const char *kind, b2nd_array_t *a) {
  double out[R * C];
  int rc = b2nd_to_cbuffer(a, out, sizeof(out));
  if (rc < 0) { printf("%s: to_cbuffer %d\n", kind, rc); return 0; }
  for (int i = 0; i < R * C; i++) {
    double want = 0.0;
    if (strcmp(kind, "uninit") == 0) return 1;
    if (strcmp(kind, "from_cbuffer") == 0) want = item(i);
    if (strcmp(kind, "full") == 0) want = 2.5;
    if (strcmp(kind, "nans") == 0) {
      if (!isnan(out[i])) { printf("%s: item %d not NaN\n", kind, i); return 0; }
      continue;
    }
    if (out[i] != want) { printf("%s: item %d is %g, not %g\n", kind, i, out[i], want); return 0; }
  }
  return 1;
}

static b2nd_context_t *context(const char *path, const char *dtype, int typesize) {
  static blosc2_cparams cp;
  static blosc2_dparams dp;
  static blosc2_storage st;
  cp = (blosc2_cparams)BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = typesize;
  cp.compcode = BLOSC_BLOSCLZ;
  dp = (blosc2_dparams)BLOSC2_DPARAMS_DEFAULTS;
  st = (blosc2_storage){.contiguous = true, .urlpath = (char *)path, .cparams = &cp, .dparams = &dp};
  int64_t shape[2] = {R, C};
  int32_t chunks[2] = {4, 4}, blocks[2] = {2, 3};
  return b2nd_create_ctx(path ? &st : NULL, 2, shape, chunks, blocks, dtype, 0, NULL, 0);
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  blosc2_init();
  char path[4096];
  int ok = 1;
  if (strcmp(argv[1], "write") == 0) {
    double data[R * C];
    for (int i = 0; i < R * C; i++) data[i] = item(i);
    double fill = 2.5;
    for (int k = 0; k < NKINDS; k++) {
      const char *kind = kinds[k];
      snprintf(path, sizeof(path), "%s/%s.b2nd", argv[2], kind);
      remove(path);
      b2nd_context_t *ctx = context(path, "<f8", 8);
      b2nd_array_t *a = NULL;
      int rc;
      if (k == 0) rc = b2nd_from_cbuffer(ctx, &a, data, sizeof(data));
      else if (k == 1) rc = b2nd_full(ctx, &a, &fill);
      else if (k == 2) rc = b2nd_nans(ctx, &a);
      else if (k == 3) rc = b2nd_zeros(ctx, &a);
      else if (k == 4) rc = b2nd_empty(ctx, &a);
      else rc = b2nd_uninit(ctx, &a);
      if (rc < 0 || a == NULL) { printf("%s: %d\n", kind, rc); return 1; }
      uint8_t *chunk;
      bool needs_free;
      int cb = blosc2_schunk_get_chunk(a->sc, 0, &chunk, &needs_free);
      if (cb < 32) { printf("%s: get_chunk %d\n", kind, cb); return 1; }
      printf("%s rc=%d nchunks=%lld special=%d\n", kind, rc, (long long)a->sc->nchunks,
             (chunk[31] >> 4) & 7);
      if (needs_free) free(chunk);
      ok &= check(kind, a);
      b2nd_free(a);
      b2nd_free_ctx(ctx);
    }
    /* Calls that must fail. */
    b2nd_context_t *ctx = context(NULL, "<f8", 8);
    b2nd_array_t *a = NULL;
    printf("from_cbuffer short: %s\n", b2nd_from_cbuffer(ctx, &a, data, sizeof(data) - 8) < 0 ? "error" : "ok");
    if (a) { b2nd_free(a); a = NULL; }
    if (b2nd_from_cbuffer(ctx, &a, data, sizeof(data)) < 0) { printf("from_cbuffer in memory\n"); return 1; }
    double out[R * C];
    printf("to_cbuffer short: %s\n", b2nd_to_cbuffer(a, out, sizeof(out) - 8) < 0 ? "error" : "ok");
    ok &= check("from_cbuffer", a);
    /* The metalayer printed; views, a concatenation and selections of the
       same array, their shapes and items printed (the same lines from
       both libraries). */
    printf("print_meta rc=%d\n", b2nd_print_meta(a));
    bool axis[3] = {false, true, false};
    b2nd_array_t *v = NULL, *w = NULL, *cat = NULL;
    int rc = b2nd_expand_dims(a, &v, axis, 3);
    printf("expand_dims rc=%d ndim=%d shape=%lld,%lld,%lld\n", rc, v->ndim,
           (long long)v->shape[0], (long long)v->shape[1], (long long)v->shape[2]);
    ok &= check("from_cbuffer", v);
    rc = b2nd_squeeze(v, &w);
    printf("squeeze rc=%d ndim=%d shape=%lld,%lld\n", rc, w->ndim, (long long)w->shape[0],
           (long long)w->shape[1]);
    ok &= check("from_cbuffer", w);
    bool bad[3] = {false, true, true};
    b2nd_array_t *none = NULL;
    printf("squeeze_index of a long dimension: %d\n", b2nd_squeeze_index(v, &none, bad));
    b2nd_free(w);
    b2nd_free(v);
    rc = b2nd_concatenate(ctx, a, a, 1, true, &cat);
    printf("concatenate rc=%d shape=%lld,%lld nchunks=%lld\n", rc, (long long)cat->shape[0],
           (long long)cat->shape[1], (long long)cat->sc->nchunks);
    double row[2 * C];
    int64_t lo[2] = {3, 0}, hi[2] = {4, 2 * C}, bs[2] = {1, 2 * C};
    rc = b2nd_get_slice_cbuffer(cat, lo, hi, row, bs, sizeof(row));
    printf("its row 3 rc=%d:", rc);
    for (int i = 0; i < 2 * C; i++) printf(" %g", row[i]);
    printf("\n");
    b2nd_free(cat);
    int64_t coords[5] = {0, 5, R * C - 1, 5, 33};
    double got[5];
    rc = b2nd_get_sparse_cbuffer(a, 5, coords, got, sizeof(got));
    printf("sparse rc=%d: %g %g %g %g %g\n", rc, got[0], got[1], got[2], got[3], got[4]);
    int64_t s0[3] = {R - 1, 0, 4}, s1[2] = {C - 1, 1};
    int64_t *sel[2] = {s0, s1};
    int64_t sizes[2] = {3, 2}, oshape[2] = {3, 2};
    double orth[6];
    rc = b2nd_get_orthogonal_selection(a, sel, sizes, orth, oshape, sizeof(orth));
    printf("orthogonal rc=%d:", rc);
    for (int i = 0; i < 6; i++) printf(" %g", orth[i]);
    printf("\n");
    b2nd_free(a);
    b2nd_free_ctx(ctx);
  } else {
    for (int k = 0; k < NKINDS; k++) {
      snprintf(path, sizeof(path), "%s/%s.b2nd", argv[2], kinds[k]);
      b2nd_array_t *a = NULL;
      int rc = b2nd_open(path, &a);
      if (rc < 0) { printf("open %s: %d\n", path, rc); return 1; }
      ok &= check(kinds[k], a);
      b2nd_free(a);
    }
  }
  blosc2_destroy();
  if (ok) printf("OK\n");
  return ok ? 0 : 1;
}
