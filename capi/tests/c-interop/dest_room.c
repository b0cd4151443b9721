/* The destination's room steers the chunk: `dest_room write FILE` compresses
   inputs that compress in some blocks and not in others (noise, a noisy
   ramp, noise with runs of zeros, zeros) with every codec, no filter and
   shuffle, levels 1, 5 and 9, blocks of 4 KiB and the tuner's, into
   destinations of nbytes + 32, + 40, + 64, + 4096 and 2 * nbytes + 64 bytes
   with blosc2_compress_ctx (one thread), decodes each chunk, and writes
   every chunk (the codec's index and the level as 2 bytes, 2 zero
   bytes, its size as 4 bytes, then its bytes) to FILE; `dest_room
   read FILE` decodes the chunks of FILE and checks each against its input.
   Built against our libblosc2 and against C-Blosc2's, each reads what the
   other wrote, and the files must be the same but for ZLIB (not promised
   at every level: the test skips its chunks). Prints OK and exits 0 when
   every chunk decodes to its input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

static uint32_t st = 12345;
static uint32_t rnd(void) { st = st * 1103515245u + 12345u; return st >> 8; }

static void fill(uint8_t *p, int n, int kind) {
  for (int i = 0; i < n; i++) {
    switch (kind) {
      case 0: p[i] = (uint8_t)rnd(); break;                                    /* noise */
      case 1: p[i] = (uint8_t)(i * 3 + (rnd() & 7)); break;                    /* noisy ramp */
      case 2: p[i] = (i / 8192) % 2 ? 0 : (uint8_t)rnd(); break;               /* noise, zeros */
      default: p[i] = 0;                                                        /* zeros */
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int writing = strcmp(argv[1], "write") == 0;
  blosc2_init();
  FILE *f = fopen(argv[2], writing ? "wb" : "rb");
  if (!f) return 2;
  const int sizes[] = {32768, 100000};
  const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
  const int clevels[] = {1, 5, 9};
  const int blocksizes[] = {0, 4096};
  int chunks = 0;
  for (int si = 0; si < 2; si++)
    for (int kind = 0; kind < 4; kind++) {
      int n = sizes[si];
      uint8_t *src = malloc((size_t)n), *out = malloc((size_t)n);
      fill(src, n, kind);
      const int extras[] = {32, 40, 64, 4096, n + 64};
      for (int ci = 0; ci < 5; ci++)
        for (int shuffle = 0; shuffle < 2; shuffle++)
          for (int li = 0; li < 3; li++)
            for (int bi = 0; bi < 2; bi++)
              for (int ei = 0; ei < 5; ei++) {
                blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
                cp.compcode = (uint8_t)codecs[ci];
                cp.clevel = (uint8_t)clevels[li];
                cp.typesize = 4;
                cp.nthreads = 1;
                cp.blocksize = blocksizes[bi];
                for (int k = 0; k < BLOSC2_MAX_FILTERS; k++) { cp.filters[k] = 0; cp.filters_meta[k] = 0; }
                if (shuffle) cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
                int32_t cap = n + extras[ei];
                uint8_t *chunk = malloc((size_t)cap);
                int32_t cs;
                uint8_t tag[4];
                if (writing) {
                  blosc2_context *c = blosc2_create_cctx(cp);
                  cs = blosc2_compress_ctx(c, src, n, chunk, cap);
                  blosc2_free_ctx(c);
                  if (cs <= 0) { printf("compress: %d\n", cs); return 1; }
                  tag[0] = (uint8_t)ci;
                  tag[1] = (uint8_t)clevels[li];
                  tag[2] = tag[3] = 0;
                  fwrite(tag, 1, 4, f);
                  fwrite(&cs, 4, 1, f);
                  fwrite(chunk, 1, (size_t)cs, f);
                } else if (fread(tag, 1, 4, f) != 4 || tag[0] != ci || tag[1] != clevels[li] ||
                           fread(&cs, 4, 1, f) != 1 || cs <= 0 || cs > cap ||
                           fread(chunk, 1, (size_t)cs, f) != (size_t)cs) {
                  printf("chunk %d: cannot read it\n", chunks);
                  return 1;
                }
                blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
                blosc2_context *d = blosc2_create_dctx(dp);
                int dn = blosc2_decompress_ctx(d, chunk, cs, out, n);
                blosc2_free_ctx(d);
                if (dn != n || memcmp(out, src, (size_t)n) != 0) {
                  printf("decode %d: %d bytes\n", chunks, dn);
                  return 1;
                }
                free(chunk);
                chunks++;
              }
      free(src);
      free(out);
    }
  fclose(f);
  printf("%d chunks OK (%s)\n", chunks, blosc2_get_version_string());
  return 0;
}
