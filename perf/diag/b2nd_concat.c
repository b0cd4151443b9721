/* b2nd_concatenate of an array with itself (axis 0, copy true, aligned)
 * and b2nd_free of the result in a loop, through either library (ours or
 * C-Blosc2's libblosc2.so.9): perf/run b2nd's image-tiles row (2,000 x
 * 2,000 float64 in 500 x 500 chunks of 100 x 100 blocks, blosclz 5
 * shuffle, 1 thread, in memory, CONTIGUOUS 0 as python-blosc2 makes it).
 * Prints the mean time per concatenate + free.
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/b2nd_concat.c -o /tmp/b2nd_concat -lm -L$C_LIB -l:libblosc2.so.9
 *   mkdir -p /tmp/ours && ln -sf $PWD/target/release/libblosc2.so /tmp/ours/libblosc2.so.9
 *   # ITERS CONTIGUOUS
 *   LD_LIBRARY_PATH=$C_LIB /tmp/b2nd_concat 50 0
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/b2nd_concat 50 0
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <b2nd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 50;
  int contiguous = argc > 2 ? atoi(argv[2]) : 0;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 8;
  cp.nthreads = 1;
  cp.compcode = BLOSC_BLOSCLZ;
  cp.clevel = 5;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = {.contiguous = contiguous, .urlpath = NULL, .cparams = &cp, .dparams = &dp};
  int64_t shape[2] = {2000, 2000};
  int32_t chunks[2] = {500, 500}, blocks[2] = {100, 100};
  b2nd_context_t *ctx = b2nd_create_ctx(&st, 2, shape, chunks, blocks, "<f8", 0, NULL, 0);
  double *img = malloc(sizeof(double) * 2000 * 2000);
  for (int i = 0; i < 2000; i++)
    for (int j = 0; j < 2000; j++) img[i * 2000 + j] = sin(i / 50.0) + cos(j / 70.0);
  b2nd_array_t *a = NULL;
  if (b2nd_from_cbuffer(ctx, &a, img, sizeof(double) * 2000 * 2000) < 0) {
    fprintf(stderr, "from_cbuffer failed\n");
    return 1;
  }
  double t0 = now();
  for (int k = 0; k < iters; k++) {
    b2nd_array_t *out = NULL;
    if (b2nd_concatenate(ctx, a, a, 0, true, &out) < 0 || out->shape[0] != 4000) {
      fprintf(stderr, "concatenate failed\n");
      return 1;
    }
    b2nd_free(out);
  }
  printf("%.1f us per concatenate + free (%lld compressed bytes each side)\n",
         (now() - t0) / iters * 1e6, (long long)a->sc->cbytes);
  b2nd_free(a);
  b2nd_free_ctx(ctx);
  free(img);
  blosc2_destroy();
  return 0;
}
