/* VL-block chunks at compression level 0 across libraries: `vl_level0 write
   CODEC FILE` writes 16 compressible 4 KiB blocks (typesize 1, clevel 0,
   codec CODEC: 1 lz4, 2 lz4hc, 4 zlib, 5 zstd) with blosc2_vlcompress_ctx
   (C-Blosc2 runs the codec on VL blocks even at level 0); `vl_level0 read
   CODEC FILE` decodes it with blosc2_vldecompress_ctx and checks every byte.
   Built against our libblosc2 and against C-Blosc2's. Prints OK and exits 0
   when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

#define NB 16
#define BS 4096
static uint8_t raw[NB][BS];
static const void *srcs[NB];
static int32_t sizes[NB];

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  blosc2_init();
  for (int i = 0; i < NB; i++) {
    for (int j = 0; j < BS; j++) raw[i][j] = (uint8_t)(j / 64 + i);
    srcs[i] = raw[i];
    sizes[i] = BS;
  }
  int codec = atoi(argv[2]);
  if (strcmp(argv[1], "write") == 0) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 1;
    cp.compcode = (uint8_t)codec;
    cp.clevel = 0;
    cp.nthreads = 1;
    blosc2_context *c = blosc2_create_cctx(cp);
    int32_t cap = NB * BS + BLOSC2_MAX_OVERHEAD + NB * 8;
    uint8_t *chunk = malloc((size_t)cap);
    int n = blosc2_vlcompress_ctx(c, srcs, sizes, NB, chunk, cap);
    if (n <= 0) { printf("vlcompress: %d\n", n); return 1; }
    FILE *f = fopen(argv[3], "wb");
    fwrite(chunk, 1, (size_t)n, f);
    fclose(f);
    free(chunk);
    blosc2_free_ctx(c);
    printf("OK %d\n", n);
    return 0;
  }
  static uint8_t chunk[NB * BS + 4096];
  FILE *f = fopen(argv[3], "rb");
  if (f == NULL) return 1;
  int n = (int)fread(chunk, 1, sizeof(chunk), f);
  fclose(f);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *d = blosc2_create_dctx(dp);
  void *bufs[NB];
  int32_t bsizes[NB];
  int r = blosc2_vldecompress_ctx(d, chunk, n, bufs, bsizes, NB);
  if (r != NB) { printf("vldecompress: %d\n", r); return 1; }
  for (int i = 0; i < NB; i++) {
    if (bsizes[i] != BS || memcmp(bufs[i], raw[i], BS) != 0) {
      printf("block %d differs\n", i);
      return 1;
    }
    free(bufs[i]);
  }
  blosc2_free_ctx(d);
  printf("OK\n");
  return 0;
}
