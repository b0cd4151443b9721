/* ZSTD_compressCCtx on the same input through two builds of libzstd, each
 * dlopened: C-Blosc2 3.3.5's (python-blosc2's libblosc2.so.9 exports it) and
 * one built from the zstd 1.5.7 sources that zstd-sys vendors, with this
 * machine's gcc and the flags of our build (.cargo/config.toml). Both write
 * the same bytes; the difference in time is the compiler's.
 * Input: 4 MiB of the perf grid's linspace-f64, bit-shuffled in 256 KiB blocks
 * (the rows "zstd bitshuffle linspace-f64"), compressed block by block.
 *
 *   Z=$(ls -d ~/.cargo/registry/src/<index>/zstd-sys-2.1.2+zstd.1.5.7/zstd/lib)
 *   gcc -O3 -falign-functions=64 -fPIC -shared -I$Z -I$Z/common -DZSTD_DISABLE_ASM \
 *       $Z/common/[a-z]*.c $Z/compress/[a-z]*.c -o /tmp/libzstd-gcc.so
 *   gcc -O2 perf/diag/zstd_build.c -o /tmp/zb -ldl
 *   /tmp/zb target/pydeps/blosc2/lib/libblosc2.so.9 9; /tmp/zb /tmp/libzstd-gcc.so 9
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef void* (*cc_t)(void);
typedef size_t (*cmp_t)(void*, void*, size_t, const void*, size_t, int);
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s LIB [LEVEL]\n", argv[0]); return 2; }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
  cc_t cc = (cc_t)dlsym(h, "ZSTD_createCCtx");
  cmp_t cmp = (cmp_t)dlsym(h, "ZSTD_compressCCtx");
  if (!cc || !cmp) { fprintf(stderr, "no ZSTD_compressCCtx in %s\n", argv[1]); return 1; }
  int level = argc > 2 ? atoi(argv[2]) : 9;
  const size_t n = 4 << 20, bs = 256 << 10, elems = bs / 8;
  uint8_t* src = calloc(n, 1);
  uint8_t* dst = malloc(bs + 65536);
  for (size_t o = 0; o < n; o += bs) {
    /* bit-row (byte j, bit k) holds bit k of byte j of each element */
    for (size_t e = 0; e < elems; e++) {
      double v = (double)(o / 8 + e) * (1000.0 / (double)((64 << 20) / 8 - 1));
      uint8_t b[8]; memcpy(b, &v, 8);
      for (int j = 0; j < 8; j++)
        for (int k = 0; k < 8; k++)
          if (b[j] >> k & 1) src[o + (size_t)(j * 8 + k) * (elems / 8) + e / 8] |= (uint8_t)(1 << (e % 8));
    }
  }
  void* ctx = cc();
  double best = 1e9; size_t tot = 0;
  for (int r = 0; r < 5; r++) {
    double t = now();
    for (int k = 0; k < 4; k++) { tot = 0; for (size_t o = 0; o < n; o += bs) tot += cmp(ctx, dst, bs + 65536, src + o, bs, level); }
    t = (now() - t) / 4; if (t < best) best = t;
  }
  printf("%s level %d: %zu bytes, %.1f us per 4 MiB (fastest of 5)\n", argv[1], level, tot, best * 1e6);
  return 0;
}
