/* Building an in-memory super-chunk by appends, then reading every chunk
 * back, through either library (ours or C-Blosc2's libblosc2.so.9):
 * N chunks of ITEMS int32 (a ramp, blosclz 5 shuffle, 1 thread),
 * blosc2_schunk_append_buffer each, then READS passes of
 * blosc2_schunk_decompress_chunk over them. CONTIGUOUS 0 is C-Blosc2's
 * default in-memory super-chunk (no frame: C keeps an array of chunk
 * pointers), 1 an in-memory frame. Prints microseconds per chunk.
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/schunk_append.c -o /tmp/sapp -L$C_LIB -l:libblosc2.so.9
 *   mkdir -p /tmp/ours && ln -sf $PWD/target/release/libblosc2.so /tmp/ours/libblosc2.so.9
 *   # N CONTIGUOUS READS ITEMS
 *   LD_LIBRARY_PATH=$C_LIB /tmp/sapp 20000 0 5 1024
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/sapp 20000 0 5 1024
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <blosc2.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 20000;
  int contiguous = argc > 2 ? atoi(argv[2]) : 0;
  int reads = argc > 3 ? atoi(argv[3]) : 5;
  int items = argc > 4 ? atoi(argv[4]) : 1024;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = {.contiguous = contiguous, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t *buf = malloc(sizeof(int32_t) * items), *out = malloc(sizeof(int32_t) * items);
  for (int i = 0; i < items; i++) buf[i] = i * 3 + i % 7;
  double t = now();
  for (int i = 0; i < n; i++) {
    buf[0] = i;
    if (blosc2_schunk_append_buffer(sc, buf, sizeof(int32_t) * items) != i + 1) {
      printf("append failed\n");
      return 1;
    }
  }
  double ta = now() - t;
  t = now();
  for (int r = 0; r < reads; r++)
    for (int i = 0; i < n; i++) {
      if (blosc2_schunk_decompress_chunk(sc, i, out, sizeof(int32_t) * items) < 0 || out[0] != i) {
        printf("read failed\n");
        return 1;
      }
    }
  double tr = now() - t;
  printf("n=%d items=%d contiguous=%d: append %.3f us/chunk, read %.3f us/chunk\n", n, items,
         contiguous, ta / n * 1e6, reads ? tr / n / reads * 1e6 : 0.0);
  blosc2_schunk_free(sc);
  blosc2_destroy();
  return 0;
}
