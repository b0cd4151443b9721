/* blosc2_decompress_ctx of one chunk in a loop, through either library
 * (ours or C-Blosc2's libblosc2.so.9): ITEMS 4-byte items, 1 thread, ITERS
 * calls a pass, the best of five passes in nanoseconds per call.
 * WORKLOAD 0 (the default): int32 counters 3i + i % 7, blosclz 5, shuffle
 * (1024 items = one 4 KiB block): small chunks show the fixed costs of a
 * decode (perf/README.md, sessions 21-23). WORKLOAD 1: float32 sine plus
 * noise, so noisy that the chunk is stored memcpyed (perf/README.md,
 * session 23). CODEC (0 blosclz, 1 lz4) and FILTER (1 shuffle,
 * 2 bitshuffle) as blosc2.h numbers them.
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/dec_small.c -o /tmp/dsmall -L$C_LIB -l:libblosc2.so.9 -lm
 *   mkdir -p /tmp/ours && ln -sf $PWD/target/release/libblosc2.so /tmp/ours/libblosc2.so.9
 *   # ITEMS ITERS [WORKLOAD [CODEC [FILTER]]]
 *   LD_LIBRARY_PATH=$C_LIB /tmp/dsmall 1024 300000
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/dsmall 1024 300000
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/dsmall 262144 200 1 0 2   # 1 MiB memcpyed
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
  int items = argc > 1 ? atoi(argv[1]) : 1024;
  int iters = argc > 2 ? atoi(argv[2]) : 300000;
  int workload = argc > 3 ? atoi(argv[3]) : 0;
  int codec = argc > 4 ? atoi(argv[4]) : BLOSC_BLOSCLZ;
  int filter = argc > 5 ? atoi(argv[5]) : BLOSC_SHUFFLE;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  cp.compcode = codec;
  cp.filters[BLOSC2_MAX_FILTERS - 1] = filter;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_context *cc = blosc2_create_cctx(cp);
  blosc2_context *dc = blosc2_create_dctx(dp);
  int32_t *buf = malloc(4 * (size_t)items), *out = malloc(4 * (size_t)items);
  uint32_t st = 12345;
  for (int i = 0; i < items; i++) {
    if (workload == 1) {
      st = st * 1103515245u + 12345u;
      double noise = ((st >> 8) & 0xFFFF) / 65536.0 - 0.5;
      float v = (float)(sin(i * 0.002) + noise * 1e-3);
      memcpy(&buf[i], &v, 4);
    } else {
      buf[i] = i * 3 + i % 7;
    }
  }
  uint8_t *c = malloc(4 * (size_t)items + BLOSC2_MAX_OVERHEAD);
  int cb = blosc2_compress_ctx(cc, buf, 4 * items, c, 4 * items + BLOSC2_MAX_OVERHEAD);
  if (cb <= 0) {
    printf("compress failed: %d\n", cb);
    return 1;
  }
  double best = 1e9;
  for (int r = 0; r < 5; r++) {
    double t = now();
    for (int i = 0; i < iters; i++) {
      if (blosc2_decompress_ctx(dc, c, cb, out, 4 * items) != 4 * items) {
        printf("decompress failed\n");
        return 1;
      }
    }
    double e = (now() - t) / iters;
    if (e < best) best = e;
  }
  if (memcmp(out, buf, 4 * (size_t)items) != 0) {
    printf("wrong output\n");
    return 1;
  }
  printf("%d items, cbytes %d, decompress_ctx %.1f ns\n", items, cb, best * 1e9);
  blosc2_free_ctx(cc);
  blosc2_free_ctx(dc);
  free(buf);
  free(out);
  free(c);
  blosc2_destroy();
  return 0;
}
