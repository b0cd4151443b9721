#include <stdio.h>
#include <string.h>
#include <blosc.h>
#include <blosc2.h>
/* order: argv[2] is a string of 'n' (Blosc2 chunk of 5 bytes) and 's'
   (Blosc1 chunk of 5 bytes from C-Blosc 1.x). */
int main(int argc, char **argv) {
  char c1[64], c2[64];
  int n1 = blosc_compress(5, 0, 1, 5, "hello", c1, sizeof c1);
  blosc2_init();
  int n2 = blosc2_compress(5, 0, 1, "world", 5, c2, sizeof c2);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 1;
  blosc2_storage st = {.contiguous = argc > 3, .urlpath = argv[1], .cparams = &cp};
  blosc2_schunk *s = blosc2_schunk_new(&st);
  for (char *p = argv[2]; *p; p++)
    printf("append %c: %lld\n", *p, (long long)blosc2_schunk_append_chunk(s, (uint8_t *)(*p == 's' ? c1 : c2), true));
  blosc2_schunk_free(s);
  s = blosc2_schunk_open(argv[1]);
  if (!s) { printf("reopen failed\n"); return 1; }
  for (int i = 0; i < s->nchunks; i++) {
    char out[16] = {0};
    int r = blosc2_schunk_decompress_chunk(s, i, out, sizeof out);
    printf("chunk %d: %d %.5s\n", i, r, out);
  }
  blosc2_schunk_free(s);
  return 0;
}
