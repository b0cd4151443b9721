#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
int main(int argc, char** argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000; int n = (argc>2?atoi(argv[2]):262144)/8;
  double* src = malloc(n*8); for (int i=0;i<n;i++) src[i] = (double)i/(n-1)*1000.0;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS; cp.compcode = BLOSC_BLOSCLZ; cp.clevel=5; cp.typesize=8; cp.nthreads=1; cp.filters[BLOSC2_MAX_FILTERS-1]=BLOSC_SHUFFLE;
  blosc2_context* cc = blosc2_create_cctx(cp);
  char* ch = malloc(n*8+64); int cs = 0;
  struct timespec a,b; clock_gettime(CLOCK_MONOTONIC,&a);
  for (long i=0;i<iters;i++) { cs = blosc2_compress_ctx(cc, src, n*8, ch, n*8+64); if (cs<0) return 1; }
  clock_gettime(CLOCK_MONOTONIC,&b);
  printf("cs=%d %s %.3f us/call\n", cs, blosc2_get_version_string(), ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/iters/1000.0);
  return 0;
}
