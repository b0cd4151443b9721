#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
int main(int argc, char** argv) {
  int n = (argc>5?atoi(argv[5]):32768)/8; long iters = argc > 1 ? atol(argv[1]) : 200000;
  int getitem = argc > 2 ? atoi(argv[2]) : 0;
  double* src = malloc(n*8); for (int i=0;i<n;i++) src[i] = (double)i/(n-1)*1000.0;
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS; cp.compcode = BLOSC_LZ4; cp.clevel=argc>4?atoi(argv[4]):5; cp.typesize=8; cp.nthreads=1; cp.filters[BLOSC2_MAX_FILTERS-1]=argc>6?atoi(argv[6]):BLOSC_SHUFFLE; if (argc>7) cp.splitmode=atoi(argv[7]);
  blosc2_context* cc = blosc2_create_cctx(cp);
  char* ch = malloc(n*8+64); int cs = blosc2_compress_ctx(cc, src, n*8, ch, n*8+64);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=1;
  blosc2_context* dc = blosc2_create_dctx(dp);
  int off = argc > 3 ? atoi(argv[3]) : 0; char* outb = aligned_alloc(4096, n*8+8192); double* out = (double*)(outb + off); fprintf(stderr, "out%%4096=%ld ", ((long)out)%4096);
  struct timespec a,b; clock_gettime(CLOCK_MONOTONIC,&a);
  for (long i=0;i<iters;i++) { int r = getitem ? blosc2_getitem_ctx(dc, ch, cs, n/2, 4096/8, out, 4096) : blosc2_decompress_ctx(dc, ch, cs, out, n*8); if (r<0) {printf("err %d\n", r); return 1;} }
  clock_gettime(CLOCK_MONOTONIC,&b);
  printf("cs=%d %s %.3f us/call check=%d\n", cs, blosc2_get_version_string(), ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/iters/1000.0, memcmp(out,src,n*8)==0);
  return 0;
}
