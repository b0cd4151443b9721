/* zlib-ng's zng_compress2 at level 5 on a shuffled 32 KiB integer ramp (the
 * data of sweep.c's zlib/shuffle/ts4/32K rows), from one of two builds:
 * linked statically against a libz-ng.a (ours: the one libz-ng-sys builds
 * under target/release/build/libz-ng-sys-HASH/out/lib, or any cmake build of
 * its sources), or, given a path, from a shared library that exports
 * zng_compress2 (python-blosc2's libblosc2.so.9, built with gcc 14). It
 * separates the compiler from our code in the ZLIB compress rows
 * (perf/README.md, session 14).
 *
 *   ZNG=$(find target/release/build -name libz-ng.a | head -1)
 *   gcc -O2 perf/diag/zng_compress.c -o /tmp/zngc $ZNG -ldl -lm
 *   /tmp/zngc                                                  # ours
 *   /tmp/zngc target/pydeps/blosc2/lib/libblosc2.so.9         # C-Blosc2 3.3.5's
 *
 * ZNG_DATA=sine times instead one 256 KiB stream of shuffled noisy sine
 * floats, the data of the grid's zlib sine-f32 256 KiB / 4 MiB compress rows
 * (one 256 KiB block each): `ZNG_DATA=sine /tmp/zngc [LIB]` (-lm to link).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>
typedef int (*compress2_fn)(uint8_t*, size_t*, const uint8_t*, size_t, int);
extern int zng_compress2(uint8_t*, size_t*, const uint8_t*, size_t, int);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc, char** argv) {
  const char* data = getenv("ZNG_DATA");
  int sine = data && strcmp(data, "sine") == 0;
  int n = sine ? 262144 : 32768, ts = 4, iters = sine ? 200 : 2000;
  uint8_t* raw = malloc(n); uint8_t* src = malloc(n); uint32_t st = 12345;
  for (int i = 0; i < n / ts; i++) {
    st = st * 1103515245u + 12345u;
    if (sine) {
      float v = (float)(sin(i * 0.002) + ((double)(st >> 8) / 16777216.0 - 0.5) * 1e-3);
      memcpy(raw + i * ts, &v, 4);
    } else {
      uint64_t v = (uint64_t)(i * 3) + ((st >> 16) & 7);
      for (int b = 0; b < ts; b++) raw[i * ts + b] = (uint8_t)(v >> (8 * b));
    }
  }
  for (int i = 0; i < n / ts; i++) for (int b = 0; b < ts; b++) src[b * (n / ts) + i] = raw[i * ts + b];
  compress2_fn f = zng_compress2;
  if (argc > 1) {
    void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h || !(f = (compress2_fn)dlsym(h, "zng_compress2"))) { fprintf(stderr, "no zng_compress2 in %s\n", argv[1]); return 1; }
  }
  uint8_t* dst = malloc(2 * n); size_t cl = 0;
  for (int r = 0; r < 3; r++) {
    double a = now();
    for (int i = 0; i < iters; i++) { cl = 2 * n; if (f(dst, &cl, src, n, 5) != 0) return 1; }
    printf("%s: %zu bytes, %.2f us per call\n", argc > 1 ? argv[1] : "static libz-ng.a", cl, (now() - a) / iters * 1e6);
  }
  return 0;
}
