/* blosc2_schunk_to_buffer of an in-memory super-chunk in a loop, through
 * either library (ours or C-Blosc2's libblosc2.so.9): N chunks of ITEMS
 * int32 (a noisy ramp, blosclz 5 shuffle, 1 thread) appended, then ITERS
 * calls of blosc2_schunk_to_buffer, each checked to give the same length
 * and freed when needs_free says so. CONTIGUOUS 1 is a frame in memory
 * (C-Blosc2 lends it), 0 C's default (no frame: C builds one each call).
 * Prints the microseconds per append, then the frame's length, needs_free
 * and microseconds per to_buffer call.
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/schunk_to_buffer.c -o /tmp/stob -L$C_LIB -l:libblosc2.so.9
 *   mkdir -p /tmp/ours && ln -sf $PWD/target/release/libblosc2.so /tmp/ours/libblosc2.so.9
 *   # ITERS CONTIGUOUS N ITEMS
 *   LD_LIBRARY_PATH=$C_LIB /tmp/stob 200 1 64 262144
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/stob 200 1 64 262144
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
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  int contiguous = argc > 2 ? atoi(argv[2]) : 1;
  int n = argc > 3 ? atoi(argv[3]) : 64;
  int items = argc > 4 ? atoi(argv[4]) : 262144;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = {.contiguous = contiguous, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  int32_t *buf = malloc(sizeof(int32_t) * items);
  unsigned s = 1;
  double ta = now();
  for (int c = 0; c < n; c++) {
    for (int i = 0; i < items; i++) {
      s = s * 1103515245u + 12345u;
      buf[i] = c * items + i + (int32_t)((s >> 16) & 15);
    }
    if (blosc2_schunk_append_buffer(sc, buf, sizeof(int32_t) * items) < 0) {
      fprintf(stderr, "append failed\n");
      return 1;
    }
  }
  printf("%d appends of %d int32: %.1f us per append\n", n, items, (now() - ta) / n * 1e6);
  int64_t len0 = -1;
  bool nf = false;
  double t0 = now();
  for (int k = 0; k < iters; k++) {
    uint8_t *frame = NULL;
    bool needs_free = false;
    int64_t len = blosc2_schunk_to_buffer(sc, &frame, &needs_free);
    if (len <= 0 || (len0 >= 0 && len != len0)) {
      fprintf(stderr, "to_buffer gave %lld\n", (long long)len);
      return 1;
    }
    len0 = len;
    nf = needs_free;
    if (needs_free) free(frame);
  }
  double t = now() - t0;
  printf("frame %lld bytes, needs_free %d: %.2f us per to_buffer\n", (long long)len0, nf,
         t / iters * 1e6);
  blosc2_schunk_free(sc);
  free(buf);
  blosc2_destroy();
  return 0;
}
