/* Where the caller's buffers lie: one 32 KiB chunk that does not compress
 * (a noisy byte ramp, blosclz 5, no filter, a destination of nbytes + 64:
 * C-Blosc2 and our library both write it as one raw stream, 32,808 bytes)
 * decoded by blosc2_decompress_ctx into output buffers at twelve offsets
 * from the chunk, through either library. Both copy the stream with
 * glibc's memcpy; it takes 0.22 us, and 0.37 us when the output starts 8
 * to 56 bytes past the stream modulo 4096 (4K aliasing). Prints the best
 * of seven passes of 20,000 calls per offset (perf/README.md, session 25).
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/decode_offsets.c -o /tmp/doff -L$C_LIB -l:libblosc2.so.9
 *   LD_LIBRARY_PATH=$C_LIB taskset -c 1 /tmp/doff
 *   LD_LIBRARY_PATH=/tmp/ours taskset -c 1 /tmp/doff   # libblosc2.so.9 -> ours
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include "blosc2.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  blosc2_init(); int n=32768;
  uint8_t* src=malloc(n); uint32_t st=12345;
  for (int i=0;i<n;i++){ st=st*1103515245u+12345u; src[i]=(uint8_t)(i*3+((st>>16)&7)); }
  blosc2_cparams cp=BLOSC2_CPARAMS_DEFAULTS; cp.compcode=0; cp.clevel=5; cp.typesize=1; cp.nthreads=1;
  for (int k=0;k<BLOSC2_MAX_FILTERS;k++){cp.filters[k]=0;}
  blosc2_context* cc=blosc2_create_cctx(cp);
  uint8_t* base = NULL; if (posix_memalign((void**)&base, 4096, 1<<20)) return 1;
  uint8_t* ch=base; int cs=blosc2_compress_ctx(cc,src,n,ch,n+64);
  blosc2_dparams dp=BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=1; blosc2_context* dc=blosc2_create_dctx(dp);
  int offs[]={0,8,16,32,40,48,64,128,256,1024,2048,3000};
  printf("cs %d\n", cs);
  for (int oi=0; oi<12; oi++){ uint8_t* out=base+65536+offs[oi];
    double best=1e9; for(int r=0;r<7;r++){ double t=now(); for(int i=0;i<20000;i++) blosc2_decompress_ctx(dc,ch,cs,out,n); double e=(now()-t)/20000; if(e<best)best=e;}
    printf("out-ch mod 4096 = %4d: %.3f us\n", (int)((out-ch-40)&4095), best*1e6); }
  return 0;}
