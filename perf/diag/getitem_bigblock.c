/* getitem of 1024 float32 items from the middle of block 0 of a 16 MiB
   LZ4 + shuffle chunk with one block size (default 8 MiB, over the 4 MiB
   block buffer oxiblosc keeps between getitems). Fastest of 9 runs of
   ITERS calls on one context. Usage: ITERS [BLOCKSIZE] [FILTER 1|2|3] [START]
   (FILTER 3 is DELTA then SHUFFLE; START the first item, default mid block 0) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
int main(int argc, char** argv) {
  long iters = atol(argv[1]);
  int bsize = argc > 2 ? atoi(argv[2]) : 8 << 20;
  int filter = argc > 3 ? atoi(argv[3]) : BLOSC_SHUFFLE;
  int n = (16 << 20) / 4;
  float* src = malloc((size_t)n * 4);
  for (int i = 0; i < n; i++) src[i] = (float)i * 0.25f;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_LZ4; cp.clevel = 5; cp.typesize = 4; cp.nthreads = 1;
  cp.blocksize = bsize;
  if (filter == 3) {
    cp.filters[BLOSC2_MAX_FILTERS - 2] = BLOSC_DELTA;
    cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
  } else {
    cp.filters[BLOSC2_MAX_FILTERS - 1] = filter;
  }
  blosc2_context* cc = blosc2_create_cctx(cp);
  char* ch = malloc((size_t)n * 4 + 64);
  int cs = blosc2_compress_ctx(cc, src, n * 4, ch, n * 4 + 64);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS; dp.nthreads = 1;
  blosc2_context* dc = blosc2_create_dctx(dp);
  int k = 1024, start = argc > 4 ? atoi(argv[4]) : bsize / 8 - k / 2;
  float* out = malloc(k * 4);
  double best = 1e18;
  for (int r = 0; r < 9; r++) {
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < iters; i++) {
      int rr = blosc2_getitem_ctx(dc, ch, cs, start, k, out, k * 4);
      if (rr != k * 4) { printf("err %d\n", rr); return 1; }
      __asm__ volatile("" ::: "memory");
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / iters;
    if (t < best) best = t;
  }
  float* all = malloc((size_t)n * 4);
  int whole = blosc2_decompress_ctx(dc, ch, cs, all, n * 4) == n * 4 &&
              memcmp(all, src, (size_t)n * 4) == 0;
  /* check: getitem gave the input's items; whole: so did decompressing all */
  printf("cs=%d blocksize=%d %.1f us/call check=%d whole=%d\n", cs, bsize,
         best / 1e3, memcmp(out, src + start, k * 4) == 0, whole);
  return 0;
}
