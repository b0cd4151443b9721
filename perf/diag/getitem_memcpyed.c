#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
int main(int argc, char** argv) {
  long iters = atol(argv[1]); int n = 4*1024*1024/4;
  unsigned* src = malloc(n*4); unsigned x=12345; for (int i=0;i<n;i++){ x = x*1103515245u+12345u; src[i]=x; }
  blosc2_init();
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS; cp.compcode = BLOSC_BLOSCLZ; cp.clevel=5; cp.typesize=4; cp.nthreads=1; cp.filters[BLOSC2_MAX_FILTERS-1]=BLOSC_BITSHUFFLE;
  blosc2_context* cc = blosc2_create_cctx(cp);
  char* ch = malloc(n*4+64); int cs = blosc2_compress_ctx(cc, src, n*4, ch, n*4+64);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=1;
  blosc2_context* dc = blosc2_create_dctx(dp);
  int k = 1024, start = (n-k)/2; int oo = argc > 2 ? atoi(argv[2]) : 0; unsigned char* ob = aligned_alloc(4096, 8192); unsigned* out = (unsigned*)(ob + oo); fprintf(stderr, "ch%%4096=%ld ", ((long)ch)%4096);
  double best=1e9;
  for (int r=0;r<9;r++){ struct timespec a,b; clock_gettime(CLOCK_MONOTONIC,&a);
  for (long i=0;i<iters;i++) { int rr = blosc2_getitem_ctx(dc, ch, cs, start, k, out, 4096); if (rr!=4096) {printf("err %d\n", rr); return 1;} __asm__ volatile("":::"memory"); }
  clock_gettime(CLOCK_MONOTONIC,&b); double t=((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/iters; if(t<best)best=t;}
  printf("cs=%d flags=%x %.2f ns/call check=%d\n", cs, (unsigned char)ch[2], best, memcmp(out,src+start,4096)==0);
  return 0;
}
