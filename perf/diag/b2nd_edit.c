/* NDArray edits through b2nd.h, timed against either library (ours or
 * C-Blosc2's libblosc2.so.9): a 40,000 x 4 array of uint32 in chunks and
 * blocks of one row (40,000 chunks), filled with a ramp, then
 *   - ITERS b2nd_set_slice_cbuffer of one row (rows in the middle),
 *   - ITERS b2nd_append of one row,
 *   - with SHRINK=1, one b2nd_resize to half the rows (C-Blosc2 takes
 *     seconds for it on a file: leave it out for quick runs).
 * In memory (FILE 0) or in a file frame (FILE 1, /tmp/b2nd_edit.b2nd).
 * Prints the mean time per call of each.
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/b2nd_edit.c -o /tmp/b2nd_edit -L$C_LIB -l:libblosc2.so.9
 *   mkdir -p /tmp/ours && ln -sf $PWD/target/release/libblosc2.so /tmp/ours/libblosc2.so.9
 *   # ITERS FILE SHRINK
 *   LD_LIBRARY_PATH=$C_LIB /tmp/b2nd_edit 200 0 1
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/b2nd_edit 200 0 1
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <b2nd.h>

#define ROWS 40000

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 100;
  int file = argc > 2 ? atoi(argv[2]) : 0;
  int shrink = argc > 3 ? atoi(argv[3]) : 0;
  const char *path = "/tmp/b2nd_edit.b2nd";
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  if (file) unlink(path);
  blosc2_storage st = {.contiguous = true, .urlpath = file ? (char *)path : NULL,
                       .cparams = &cp, .dparams = &dp};
  int64_t shape[2] = {ROWS, 4};
  int32_t chunks[2] = {1, 4}, blocks[2] = {1, 4};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunks, blocks, "<u4", 0, NULL, 0);
  b2nd_array_t *a = NULL;
  if (ctx == NULL || b2nd_zeros(ctx, &a) < 0) {
    printf("cannot create the array\n");
    return 1;
  }
  uint32_t *data = malloc(sizeof(uint32_t) * ROWS * 4);
  for (int i = 0; i < ROWS * 4; i++) data[i] = i;
  int64_t zero[2] = {0, 0};
  if (b2nd_set_slice_cbuffer(data, shape, sizeof(uint32_t) * ROWS * 4, zero, shape, a) < 0) {
    printf("cannot fill the array\n");
    return 1;
  }
  uint32_t row[4] = {9, 9, 9, 9};
  int64_t rshape[2] = {1, 4};
  double t = now();
  for (int k = 0; k < iters; k++) {
    int64_t start[2] = {ROWS / 2 + k % 1000, 0}, stop[2] = {ROWS / 2 + k % 1000 + 1, 4};
    if (b2nd_set_slice_cbuffer(row, rshape, sizeof row, start, stop, a) < 0) {
      printf("set_slice failed\n");
      return 1;
    }
  }
  printf("set_slice_row %s: %.1f us\n", file ? "file" : "memory", (now() - t) / iters * 1e6);
  t = now();
  for (int k = 0; k < iters; k++) {
    if (b2nd_append(a, row, sizeof row, 0) < 0) {
      printf("append failed\n");
      return 1;
    }
  }
  printf("append_row %s: %.1f us\n", file ? "file" : "memory", (now() - t) / iters * 1e6);
  if (shrink) {
    int64_t half[2] = {ROWS / 2, 4};
    t = now();
    if (b2nd_resize(a, half, NULL) < 0) {
      printf("resize failed\n");
      return 1;
    }
    printf("shrink_half %s: %.1f us\n", file ? "file" : "memory", (now() - t) * 1e6);
  }
  b2nd_free(a);
  b2nd_free_ctx(ctx);
  free(data);
  blosc2_destroy();
  return 0;
}
