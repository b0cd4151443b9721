/* VL-block chunks with a dictionary across libraries: `vl_dict write CODEC
   FILE [CLEVEL [ramp|straddle]]` writes 64 JSON-like blocks (typesize 1, use_dict, level
   CLEVEL, default 5) with blosc2_vlcompress_ctx and codec CODEC (0 blosclz,
   1 lz4, 2 lz4hc, 4 zlib, 5 zstd), checking that the chunk has the
   dictionary flag (none at level 0); `vl_dict read CODEC FILE [ramp|straddle]` decodes
   it with blosc2_vldecompress_ctx and blosc2_decompress_ctx and checks every
   byte. With `ramp`, the blocks are 64 compressible 4 KiB ramps instead
   (C-Blosc2 runs the codec on VL blocks even at level 0); with `straddle`,
   44 blocks of 80 bytes and 20 of 81 (5,140 bytes: a 257-byte LZ4
   dictionary, whose size C writes at its byte 256, the four bytes straddling
   its end). Built once against
   our libblosc2 and once against C-Blosc2's, each reads what the other wrote.
   Prints OK and exits 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

#define NB 64
#define RAMP 4096
static char raw[NB][RAMP];
static const void *srcs[NB];
static int32_t sizes[NB];

int main(int argc, char **argv) {
  if (argc < 4 || argc > 6) return 2;
  blosc2_init();
  int write = strcmp(argv[1], "write") == 0;
  int last = argc == (write ? 6 : 5);
  int ramp = last && strcmp(argv[argc - 1], "ramp") == 0;
  int straddle = last && strcmp(argv[argc - 1], "straddle") == 0;
  int32_t total = 0;
  for (int i = 0; i < NB; i++) {
    if (straddle) {
      sizes[i] = i < 44 ? 80 : 81;
      for (int j = 0; j < sizes[i]; j++) raw[i][j] = (char)((j * 7 + i) % 251);
      srcs[i] = raw[i];
      total += sizes[i];
      continue;
    }
    if (ramp) {
      for (int j = 0; j < RAMP; j++) raw[i][j] = (char)(j / 64 + i);
      sizes[i] = RAMP;
      srcs[i] = raw[i];
      total += sizes[i];
      continue;
    }
    sizes[i] = snprintf(raw[i], 512,
                        "{\"id\":\"en:ingredient-%03d\",\"vegan\":\"%s\",\"text\":\"INGREDIENT "
                        "NUMBER %03d\",\"from_palm_oil\":null,\"processing\":null,\"labels\":null,"
                        "\"origins\":null,\"quantity\":null}",
                        i, i % 3 ? "yes" : "maybe", i);
    srcs[i] = raw[i];
    total += sizes[i];
  }
  int codec = atoi(argv[2]);
  if (write) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.typesize = 1;
    cp.compcode = (uint8_t)codec;
    cp.use_dict = 1;
    cp.nthreads = 1;
    if (argc >= 5) cp.clevel = (uint8_t)atoi(argv[4]);
    blosc2_context *c = blosc2_create_cctx(cp);
    int32_t cap = total + BLOSC2_MAX_OVERHEAD + NB * 64 + BLOSC2_MAXDICTSIZE;
    uint8_t *chunk = malloc((size_t)cap);
    int n = blosc2_vlcompress_ctx(c, srcs, sizes, NB, chunk, cap);
    /* BloscLZ does not shrink these small blocks (they are stored raw). */
    if (n <= 0 || (n >= total && codec != 0 && cp.clevel > 0)) { printf("vlcompress: %d\n", n); return 1; }
    if (((chunk[BLOSC2_CHUNK_BLOSC2_FLAGS] & BLOSC2_USEDICT) != 0) != (cp.clevel > 0)) {
      printf("dictionary flag wrong for clevel %d\n", cp.clevel);
      return 1;
    }
    FILE *f = fopen(argv[3], "wb");
    fwrite(chunk, 1, (size_t)n, f);
    fclose(f);
    free(chunk);
    blosc2_free_ctx(c);
    printf("OK\n");
    return 0;
  }
  static uint8_t chunk[NB * RAMP + 65536];
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
    if (bsizes[i] != sizes[i] || memcmp(bufs[i], srcs[i], (size_t)sizes[i]) != 0) {
      printf("block %d differs\n", i);
      return 1;
    }
    free(bufs[i]);
  }
  uint8_t *all = malloc((size_t)total);
  r = blosc2_decompress_ctx(d, chunk, n, all, total);
  if (r != total) { printf("decompress: %d\n", r); return 1; }
  int32_t off = 0;
  for (int i = 0; i < NB; i++) {
    if (memcmp(all + off, srcs[i], (size_t)sizes[i]) != 0) { printf("concat %d differs\n", i); return 1; }
    off += sizes[i];
  }
  free(all);
  blosc2_free_ctx(d);
  printf("OK\n");
  return 0;
}
