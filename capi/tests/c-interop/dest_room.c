/* The destination's room steers the chunk: `dest_room write FILE` compresses
   inputs that compress in some blocks and not in others (noise, a noisy
   ramp, noise with runs of zeros, zeros) with every codec, no filter and
   shuffle, levels 1, 5 and 9, blocks of 4 KiB and the tuner's, into
   destinations of nbytes + 32 (Blosc1: + 16), + 40 (+ 24), + 64, + 4096 and
   2 * nbytes + 64 bytes, one thread, decodes each chunk, and writes every
   chunk (the codec's index and the level as 2 bytes, 2 zero bytes, its size
   as 4 bytes, then its bytes) to FILE; `dest_room read FILE` decodes the
   chunks of FILE and checks each against its input.

   Built against `blosc2.h` it calls blosc2_compress_ctx; with -DBLOSC1,
   against C-Blosc 1.x's `blosc.h`, blosc_compress with the global settings.
   Built for our library and for C's, each reads what the other wrote, and
   the test compares the files' chunks where the codec libraries are the
   same. Prints OK and the library's version, and exits 0, when every chunk
   decodes to its input. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#ifdef BLOSC1
#include "blosc.h"
#define HEADER 16
#else
#include "blosc2.h"
#define HEADER 32
#endif

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

/* One chunk of `n` bytes at `src` into `cap` bytes at `chunk`. */
static int compress(int ci, int clevel, int shuffle, int blocksize, const uint8_t *src, int n,
                    uint8_t *chunk, int cap) {
#ifdef BLOSC1
  const char *names[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};
  if (blosc_set_compressor(names[ci]) < 0) return -1;
  blosc_set_blocksize((size_t)blocksize);
  return blosc_compress(clevel, shuffle, 4, (size_t)n, src, chunk, (size_t)cap);
#else
  const int codecs[] = {BLOSC_BLOSCLZ, BLOSC_LZ4, BLOSC_LZ4HC, BLOSC_ZLIB, BLOSC_ZSTD};
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = (uint8_t)codecs[ci];
  cp.clevel = (uint8_t)clevel;
  cp.typesize = 4;
  cp.nthreads = 1;
  cp.blocksize = blocksize;
  for (int k = 0; k < BLOSC2_MAX_FILTERS; k++) { cp.filters[k] = 0; cp.filters_meta[k] = 0; }
  if (shuffle) cp.filters[BLOSC2_MAX_FILTERS - 1] = BLOSC_SHUFFLE;
  blosc2_context *c = blosc2_create_cctx(cp);
  int cs = blosc2_compress_ctx(c, src, n, chunk, cap);
  blosc2_free_ctx(c);
  return cs;
#endif
}

static int decompress(const uint8_t *chunk, int cs, uint8_t *out, int n) {
#ifdef BLOSC1
  (void)cs;
  return blosc_decompress(chunk, out, (size_t)n);
#else
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *d = blosc2_create_dctx(dp);
  int dn = blosc2_decompress_ctx(d, chunk, cs, out, n);
  blosc2_free_ctx(d);
  return dn;
#endif
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int writing = strcmp(argv[1], "write") == 0;
#ifdef BLOSC1
  blosc_init();
  blosc_set_nthreads(1);
  const char *version = blosc_get_version_string();
#else
  blosc2_init();
  const char *version = blosc2_get_version_string();
#endif
  FILE *f = fopen(argv[2], writing ? "wb" : "rb");
  if (!f) return 2;
  const int sizes[] = {32768, 100000};
  const int clevels[] = {1, 5, 9};
  const int blocksizes[] = {0, 4096};
  int chunks = 0;
  for (int si = 0; si < 2; si++)
    for (int kind = 0; kind < 4; kind++) {
      int n = sizes[si];
      uint8_t *src = malloc((size_t)n), *out = malloc((size_t)n);
      fill(src, n, kind);
      const int extras[] = {HEADER, HEADER + 8, 64, 4096, n + 64};
      for (int ci = 0; ci < 5; ci++)
        for (int shuffle = 0; shuffle < 2; shuffle++)
          for (int li = 0; li < 3; li++)
            for (int bi = 0; bi < 2; bi++)
              for (int ei = 0; ei < 5; ei++) {
                int32_t cap = n + extras[ei];
                uint8_t *chunk = malloc((size_t)cap);
                int32_t cs;
                uint8_t tag[4];
                if (writing) {
                  cs = compress(ci, clevels[li], shuffle, blocksizes[bi], src, n, chunk, cap);
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
                int dn = decompress(chunk, cs, out, n);
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
  printf("%d chunks OK (%s)\n", chunks, version);
  return 0;
}
