/* blosc2_decompress_ctx of one chunk of float32 sine plus noise (the perf
 * grid's sine-f32 workload, another generator) in a loop, through either
 * library (ours or C-Blosc2's libblosc2.so.9): BYTES of data, codec CODEC
 * (0 blosclz, 1 lz4) at clevel 5, FILTER (1 shuffle, 2 bitshuffle),
 * 1 thread; the best of five passes of ITERS calls, in microseconds per
 * call. For the grid's blosclz + bitshuffle sine-f32 1 MiB decompress row
 * (perf/README.md, session 23).
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/dec_sine.c -o /tmp/dsine -L$C_LIB -l:libblosc2.so.9 -lm
 *   mkdir -p /tmp/ours && ln -sf $PWD/target/release/libblosc2.so /tmp/ours/libblosc2.so.9
 *   # BYTES CODEC FILTER ITERS
 *   LD_LIBRARY_PATH=$C_LIB /tmp/dsine 1048576 0 2 200
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/dsine 1048576 0 2 200
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <blosc2.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int bytes = argc > 1 ? atoi(argv[1]) : 1 << 20;
  int codec = argc > 2 ? atoi(argv[2]) : 0;
  int filter = argc > 3 ? atoi(argv[3]) : 2;
  int iters = argc > 4 ? atoi(argv[4]) : 200;
  int n = bytes / 4;
  blosc2_init();
  float *buf = malloc(4 * (size_t)n), *out = malloc(4 * (size_t)n);
  uint32_t st = 12345;
  for (int i = 0; i < n; i++) {
    st = st * 1103515245u + 12345u;
    double noise = ((st >> 8) & 0xFFFF) / 65536.0 - 0.5;
    buf[i] = (float)(sin(i * 0.002) + noise * 1e-3);
  }
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.compcode = codec;
  cp.clevel = 5;
  cp.nthreads = 1;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = filter;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_context *cc = blosc2_create_cctx(cp);
  blosc2_context *dc = blosc2_create_dctx(dp);
  uint8_t *c = malloc(4 * (size_t)n + BLOSC2_MAX_OVERHEAD);
  int cb = blosc2_compress_ctx(cc, buf, 4 * n, c, 4 * n + BLOSC2_MAX_OVERHEAD);
  if (cb <= 0) {
    printf("compress failed: %d\n", cb);
    return 1;
  }
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    double t = now();
    for (int i = 0; i < iters; i++) {
      if (blosc2_decompress_ctx(dc, c, cb, out, 4 * n) != 4 * n) {
        printf("decompress failed\n");
        return 1;
      }
    }
    double e = (now() - t) / iters;
    if (e < best) best = e;
  }
  if (memcmp(out, buf, 4 * (size_t)n) != 0) {
    printf("wrong output\n");
    return 1;
  }
  printf("%d bytes, cbytes %d, decompress_ctx %.3f us\n", 4 * n, cb, best * 1e6);
  blosc2_free_ctx(cc);
  blosc2_free_ctx(dc);
  free(buf);
  free(out);
  free(c);
  blosc2_destroy();
  return 0;
}
