/* VL-block chunks across libraries: `vl_blocks write FILE` writes a
   VL-block chunk of 6 blocks (sizes 1..70000, lz4 + shuffle, typesize 4) with
   blosc2_vlcompress_ctx; `vl_blocks read FILE` decodes it with
   blosc2_vldecompress_ctx and blosc2_decompress_ctx and checks every byte.
   With a third argument `delta` the chunk has typesize 1 and a DELTA
   filter (slot 4, before the SHUFFLE of slot 5), which VL-block chunks take
   per block (each block its own reference, as block 0 of a regular chunk).
   Built once against our libblosc2 and once against C-Blosc2's, each reads
   what the other wrote. Prints OK and exits 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

#define NB 6
static const int32_t sizes[NB] = {1, 5, 120, 768, 3000, 70000};

static uint8_t *block(int i) {
  uint8_t *b = malloc((size_t)sizes[i]);
  for (int32_t j = 0; j < sizes[i]; j++) b[j] = (uint8_t)((j / 3) * (i + 7) >> 2);
  return b;
}

int main(int argc, char **argv) {
  if (argc != 3 && !(argc == 4 && strcmp(argv[3], "delta") == 0)) return 2;
  int delta = argc == 4;
  blosc2_init();
  uint8_t *blocks[NB];
  int32_t total = 0;
  for (int i = 0; i < NB; i++) { blocks[i] = block(i); total += sizes[i]; }
  int rc = 1;
  if (strcmp(argv[1], "write") == 0) {
    blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
    cp.compcode = BLOSC_LZ4;
    cp.typesize = 4;
    /* Typesize 1 with DELTA: blocks of 1 and 5 bytes would leave bytes
       past whole 4-byte words, which C's DELTA encoder leaves unwritten
       (CHUNK-NOTES §14, pitfall 16). */
    if (delta) { cp.filters[4] = BLOSC_DELTA; cp.typesize = 1; }
    blosc2_context *c = blosc2_create_cctx(cp);
    int32_t cap = total + 1024;
    uint8_t *chunk = malloc((size_t)cap);
    int n = blosc2_vlcompress_ctx(c, (const void *const *)blocks, sizes, NB, chunk, cap);
    if (n <= 0 || n >= total) { printf("vlcompress: %d\n", n); return 1; }
    FILE *f = fopen(argv[2], "wb");
    fwrite(chunk, 1, (size_t)n, f);
    fclose(f);
    blosc2_free_ctx(c);
    rc = 0;
  } else {
    FILE *f = fopen(argv[2], "rb");
    static uint8_t chunk[200000];
    int n = (int)fread(chunk, 1, sizeof(chunk), f);
    fclose(f);
    blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
    blosc2_context *d = blosc2_create_dctx(dp);
    int32_t nblocks = 0;
    if (blosc2_vlchunk_get_nblocks(chunk, n, &nblocks) < 0 || nblocks != NB) { printf("nblocks %d\n", nblocks); return 1; }
    void *dests[NB];
    int32_t dsizes[NB];
    int got = blosc2_vldecompress_ctx(d, chunk, n, dests, dsizes, NB);
    if (got != NB) { printf("vldecompress: %d\n", got); return 1; }
    for (int i = 0; i < NB; i++) {
      if (dsizes[i] != sizes[i] || memcmp(dests[i], blocks[i], (size_t)sizes[i]) != 0) { printf("block %d differs\n", i); return 1; }
      free(dests[i]);
    }
    uint8_t *all = malloc((size_t)total);
    if (blosc2_decompress_ctx(d, chunk, n, all, total) != total) { printf("decompress\n"); return 1; }
    int32_t at = 0;
    for (int i = 0; i < NB; i++) {
      if (memcmp(all + at, blocks[i], (size_t)sizes[i]) != 0) { printf("concatenation differs at block %d\n", i); return 1; }
      at += sizes[i];
    }
    free(all);
    blosc2_free_ctx(d);
    rc = 0;
  }
  for (int i = 0; i < NB; i++) free(blocks[i]);
  blosc2_destroy();
  if (rc == 0) printf("OK\n");
  return rc;
}
