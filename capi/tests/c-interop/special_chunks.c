/* blosc2_chunk_zeros, _nans, _uninit and _repeatval across libraries, over
   a grid of parameters valid and not: type sizes 1-255, nbytes from 0 to
   the largest a chunk holds (and -1), block sizes 0, 100 and -1, a codec
   C-Blosc2 has and one it has not, three filter pipelines and five
   destination sizes around what the chunk takes. One line per call: the
   return code and, for a chunk, its bytes, blosc2_cbuffer_sizes, its
   decompression (a hash of the bytes; the return code only for an uninit
   chunk, whose content is undefined) for nbytes up to 4096, and
   blosc2_getitem of its last item. Built against our libblosc2 and
   C-Blosc2's; capi/tests/c_interop.rs compares the lines. OK last. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

static uint32_t fnv(const uint8_t *p, int n) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

int main(void) {
  blosc2_init();
  const char *names[4] = {"zeros", "nans", "uninit", "repeatval"};
  int32_t typesizes[] = {1, 2, 3, 4, 7, 8, 16, 255};
  int32_t nbytes_[] = {0, 1, 7, 8, 12, 100, 4096, 2147483615, -1};
  int32_t blocksizes[] = {0, 100, -1};
  uint8_t codecs[] = {BLOSC_BLOSCLZ, BLOSC_ZSTD, 6};
  uint8_t pipes[3][6] = {{0}, {BLOSC_SHUFFLE}, {BLOSC_BITSHUFFLE, BLOSC_DELTA}};
  uint8_t value[255], dest[1000];
  uint8_t *out = malloc(4096 + 8);
  for (int i = 0; i < 255; i++) value[i] = (uint8_t)(0x11 * (i + 1));
  long calls = 0;
  for (int f = 0; f < 4; f++)
  for (size_t t = 0; t < sizeof typesizes / sizeof *typesizes; t++)
  for (size_t n = 0; n < sizeof nbytes_ / sizeof *nbytes_; n++)
  for (size_t b = 0; b < sizeof blocksizes / sizeof *blocksizes; b++)
  for (size_t c = 0; c < sizeof codecs; c++)
  for (int p = 0; p < 3; p++) {
    int32_t ts = typesizes[t], nb = nbytes_[n];
    int32_t rooms[5] = {31, 32, 32 + ts - 1, 32 + ts, 1000};
    for (int r = 0; r < 5; r++) {
      blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
      cp.typesize = ts;
      cp.blocksize = blocksizes[b];
      cp.compcode = codecs[c];
      cp.nthreads = 1;
      memcpy(cp.filters, pipes[p], 6);
      memset(dest, 0xee, sizeof dest);
      int rc;
      switch (f) {
        case 0: rc = blosc2_chunk_zeros(cp, nb, dest, rooms[r]); break;
        case 1: rc = blosc2_chunk_nans(cp, nb, dest, rooms[r]); break;
        case 2: rc = blosc2_chunk_uninit(cp, nb, dest, rooms[r]); break;
        default: rc = blosc2_chunk_repeatval(cp, nb, dest, rooms[r], value); break;
      }
      calls++;
      printf("%s ts=%d nb=%d bs=%d codec=%d pipe=%d room=%d: rc=%d", names[f], ts, nb,
             blocksizes[b], codecs[c], p, rooms[r], rc);
      if (rc > 0 && rc <= (int)sizeof dest) {
        printf(" chunk=");
        for (int i = 0; i < rc; i++) printf("%02x", dest[i]);
        int32_t snb = -1, scb = -1, sbs = -1;
        int src = blosc2_cbuffer_sizes(dest, &snb, &scb, &sbs);
        printf(" sizes=%d:%d,%d,%d", src, snb, scb, sbs);
        if (nb >= 0 && nb <= 4096) {
          int d = blosc2_decompress(dest, rc, out, nb);
          if (f == 2 || d < 0) printf(" dec=%d", d);
          else printf(" dec=%d:%08x", d, fnv(out, d));
        }
        if (nb >= ts && f != 2) {
          uint8_t item[255];
          int g = blosc2_getitem(dest, rc, nb / ts - 1, 1, item, ts);
          printf(" last=%d:", g);
          for (int i = 0; i < g; i++) printf("%02x", item[i]);
        }
      }
      printf("\n");
    }
  }
  free(out);
  blosc2_destroy();
  printf("%ld calls\nOK\n", calls);
  return 0;
}
