/* A sweep of the blosc2_*_ctx calls beyond the perf grid's rows: codecs
 * (blosclz, lz4, zstd, zlib) x filter pipelines (none, shuffle, bitshuffle,
 * delta+shuffle, shuffle+bytedelta, trunc_prec+shuffle) x typesizes 1-16 x
 * 32 / 256 KiB x clevel 1, 5, 9, on integer ramps with small noise (very
 * redundant data). Each line: key, op, microseconds (fastest of 5 rounds of
 * >= TARGET/5 s), the chunk size, and "wrong" when a getitem's items differ
 * from the input (C-Blosc2 3.3.5 returns wrong items from DELTA chunks for
 * ranges past block 0). Run it once per library and compare the files with
 * sweep_compare.py.
 *
 *   INC=target/pydeps/blosc2/include C_LIB=target/pydeps/blosc2/lib
 *   gcc -O2 -I$INC perf/diag/sweep.c -o /tmp/sweep -L$C_LIB -l:libblosc2.so.9
 *   LD_LIBRARY_PATH=$C_LIB /tmp/sweep 0.01 > /tmp/c.tsv
 *   LD_LIBRARY_PATH=/tmp/ours /tmp/sweep 0.01 > /tmp/o.tsv   # libblosc2.so.9 -> ours
 *   python3 perf/diag/sweep_compare.py /tmp/c.tsv /tmp/o.tsv
 *
 * SEL=substring keeps only the keys containing it; OP=0|1|2 only compress,
 * decompress or getitem.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include "blosc2.h"
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc, char** argv){
  blosc2_init();
  int codecs[]={BLOSC_BLOSCLZ,BLOSC_LZ4,BLOSC_ZSTD,BLOSC_ZLIB}; const char* cn[]={"blosclz","lz4","zstd","zlib"};
  int tss[]={1,2,4,8,16}; int sizes[]={32768,262144};
  const char* fn[]={"none","shuffle","bitshuffle","delta+shuffle","bytedelta","trunc+shuffle"};
  int clevels[]={1,5,9};
  double target = argc>1 ? atof(argv[1]) : 0.01;
  for (int ci=0; ci<4; ci++) for (int fi=0; fi<6; fi++) for (int ti=0; ti<5; ti++) for (int si=0; si<2; si++) for (int li=0; li<3; li++) {
    int ts=tss[ti], n=sizes[si], clevel=clevels[li];
    if (ci>=2 && clevel==9 && si==1) continue; /* slow */
    uint8_t* src=malloc(n); uint32_t st=12345;
    for (int i=0;i<n/ts;i++){ st=st*1103515245u+12345u; uint64_t v=(uint64_t)(i*3) + ((st>>16)&7); for(int b=0;b<ts;b++) src[i*ts+b]= b<8 ? (uint8_t)(v>>(8*b)) : (uint8_t)b; }
    for (int i=(n/ts)*ts;i<n;i++) src[i]=0;
    if (fi==5 && ts!=4 && ts!=8) { free(src); continue; }
    if (fi==5) { for (int i=0;i<n/ts;i++) { if (ts==4){ float f=(float)i*0.37f; memcpy(src+i*4,&f,4);} else { double d=(double)i*0.37; memcpy(src+i*8,&d,8);} } }
    char key[128]; snprintf(key,sizeof key,"%s/%s/ts%d/%dK/l%d",cn[ci],fn[fi],ts,n/1024,clevel);
    if (getenv("SEL") && !strstr(key, getenv("SEL"))) { free(src); continue; }
    blosc2_cparams cp=BLOSC2_CPARAMS_DEFAULTS; cp.compcode=codecs[ci]; cp.clevel=clevel; cp.typesize=ts; cp.nthreads=1;
    for (int k=0;k<BLOSC2_MAX_FILTERS;k++){cp.filters[k]=0;cp.filters_meta[k]=0;}
    if (fi==1) cp.filters[5]=BLOSC_SHUFFLE;
    if (fi==2) cp.filters[5]=BLOSC_BITSHUFFLE;
    if (fi==3){ cp.filters[4]=BLOSC_DELTA; cp.filters[5]=BLOSC_SHUFFLE; }
    if (fi==4){ cp.filters[4]=BLOSC_SHUFFLE; cp.filters[5]=35; cp.filters_meta[5]=ts; }
    if (fi==5){ cp.filters[4]=BLOSC_TRUNC_PREC; cp.filters_meta[4]=ts==4?10:20; cp.filters[5]=BLOSC_SHUFFLE; }
    blosc2_context* cc=blosc2_create_cctx(cp);
    blosc2_dparams dp=BLOSC2_DPARAMS_DEFAULTS; dp.nthreads=1; blosc2_context* dc=blosc2_create_dctx(dp);
    uint8_t* ch=malloc(n+64); uint8_t* out=malloc(n); uint8_t item[4096];
    int cs=blosc2_compress_ctx(cc,src,n,ch,n+64); if (cs<=0){ printf("%s/%s/ts%d/%dK/l%d\tERR\t%d\n",cn[ci],fn[fi],ts,n/1024,clevel,cs); continue; }
    int only = getenv("OP") ? atoi(getenv("OP")) : -1;
    for (int op=0; op<3; op++) { if (only>=0 && op!=only) continue;
      double best=1e9; long iters=1;
      /* calibrate */
      for(;;){ double t=now(); for(long i=0;i<iters;i++){ int r = op==0 ? blosc2_compress_ctx(cc,src,n,ch,n+64) : op==1 ? blosc2_decompress_ctx(dc,ch,cs,out,n) : blosc2_getitem_ctx(dc,ch,cs,(n/ts)/2,64,item,sizeof item); if(r<0){printf("err\n");return 1;} } double e=now()-t; if (e>target/5 || iters>1000000) break; iters*=2; }
      for (int r=0;r<5;r++){ double t=now(); for(long i=0;i<iters;i++){ if(op==0) blosc2_compress_ctx(cc,src,n,ch,n+64); else if(op==1) blosc2_decompress_ctx(dc,ch,cs,out,n); else blosc2_getitem_ctx(dc,ch,cs,(n/ts)/2,64,item,sizeof item);} double e=(now()-t)/iters; if(e<best)best=e; }
      if (op==1 && memcmp(out, src, n) && fi!=5) { printf("%s\tMISMATCH\n", key); }
      int wrong = op==2 && memcmp(item, src + ((n/ts)/2)*ts, 64*ts) && fi!=5;
      printf("%s\t%s\t%.3f\t%d%s\n", key, op==0?"compress":op==1?"decompress":"getitem", best*1e6, cs, wrong ? "\twrong" : "");
    }
    blosc2_free_ctx(cc); blosc2_free_ctx(dc); free(src); free(ch); free(out);
    fflush(stdout);
  }
  return 0;
}
