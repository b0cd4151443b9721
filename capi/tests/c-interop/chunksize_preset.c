/* `schunk->chunksize` written by the program before the first append, as
   python-blosc2's SChunk(chunksize=...) writes it after blosc2_schunk_new:
   `chunksize_preset DIR` makes, for each case, a super-chunk in memory
   (and one in the file DIR/case-K.b2frame), sets its chunksize (or leaves
   it), appends buffers of the case's sizes, and prints after each append
   nchunks, chunksize and nbytes as the struct shows them; then the frame
   in memory's length and FNV-1a hash, and the file frame reopened by path:
   its chunksize and each chunk's nbytes. Built for our library and for
   C-Blosc2's, the two must print the same, but for case 6: a first chunk
   longer than the chunk size written, which C-Blosc2 refuses
   (BLOSC2_ERROR_CHUNK_APPEND) and ours appends, the sizes then varying
   (as a longer chunk after the first does in both). */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "blosc2.h"

static uint64_t fnv(const uint8_t *p, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t i = 0; i < n; i++) { h ^= p[i]; h *= 1099511628211ull; }
  return h;
}

static blosc2_schunk *make(blosc2_cparams *cp, const char *path) {
  blosc2_storage st = BLOSC2_STORAGE_DEFAULTS;
  st.contiguous = true;
  st.cparams = cp;
  st.urlpath = (char *)path;
  return blosc2_schunk_new(&st);
}

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: chunksize_preset DIR\n"); return 2; }
  blosc2_init();
  /* chunksize set (-2: left as blosc2_schunk_new made it), whether to
     print the frame in memory's hash (not where C-Blosc2's context
     compresses a chunk after a shorter one with that one's block size, a
     difference of the chunks kept apart: fuzz/c-diff's `samef`), then the
     sizes of the buffers appended (0 ends the list). */
  const int cases[][7] = {
    {4000, 1, 1000, 0},              /* shorter than it: the last chunk */
    {4000, 1, 4000, 4000, 1000, 0},  /* whole chunks, then a short one */
    {4000, 0, 1000, 4000, 0},        /* a chunk after a short one: sizes vary */
    {0, 1, 3000, 1000, 0},           /* 0: sizes vary from the start */
    {-1, 1, 1000, 1000, 0},          /* -1: the first chunk sets it */
    {-2, 1, 1000, 1000, 0},          /* not written */
    {4000, 1, 6000, 0},              /* longer than it: C refuses, ours vary */
    {-2, 0, 1000, 6000, 0},          /* longer than the first: sizes vary */
  };
  int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
  uint8_t *data = malloc(8000);
  for (int i = 0; i < 8000; i++) data[i] = (uint8_t)((i / 4) * 7 + (i % 4 == 0 ? i / 64 : 0));
  for (int k = 0; k < ncases; k++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/case-%d.b2frame", argv[1], k);
    blosc2_remove_urlpath(path);
    for (int file = 0; file < 2; file++) {
      blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
      cp.typesize = 4;
      cp.nthreads = 1;
      cp.clevel = 5;
      blosc2_schunk *sc = make(&cp, file ? path : NULL);
      if (sc == NULL) { printf("case %d: schunk_new failed\n", k); continue; }
      printf("case %d %s: new chunksize %d\n", k, file ? "file" : "memory", sc->chunksize);
      if (cases[k][0] != -2) sc->chunksize = cases[k][0];
      for (int j = 2; j < 7 && cases[k][j] != 0; j++) {
        int64_t r = blosc2_schunk_append_buffer(sc, data, cases[k][j]);
        printf("  append %d: %lld, nchunks %lld chunksize %d nbytes %lld\n", cases[k][j],
               (long long)r, (long long)sc->nchunks, sc->chunksize, (long long)sc->nbytes);
      }
      if (!file && cases[k][1]) {
        uint8_t *buf = NULL;
        bool needs_free = false;
        int64_t n = blosc2_schunk_to_buffer(sc, &buf, &needs_free);
        printf("  frame %lld bytes, fnv %016llx\n", (long long)n,
               n > 0 ? (unsigned long long)fnv(buf, n) : 0ull);
        char mem[4096];
        snprintf(mem, sizeof(mem), "%s/memory-%d.b2frame", argv[1], k);
        FILE *f = fopen(mem, "wb");
        if (f != NULL && n > 0) fwrite(buf, 1, (size_t)n, f);
        if (f != NULL) fclose(f);
        if (needs_free) free(buf);
      }
      blosc2_schunk_free(sc);
    }
    blosc2_schunk *back = blosc2_schunk_open(path);
    if (back == NULL) { printf("  reopened: NULL\n"); continue; }
    printf("  reopened: nchunks %lld chunksize %d nbytes %lld\n", (long long)back->nchunks,
           back->chunksize, (long long)back->nbytes);
    for (int64_t i = 0; i < back->nchunks; i++) {
      uint8_t *chunk;
      bool needs_free;
      int cb = blosc2_schunk_get_chunk(back, i, &chunk, &needs_free);
      int32_t nb = 0, cbytes = 0, bs = 0;
      if (cb > 0) blosc2_cbuffer_sizes(chunk, &nb, &cbytes, &bs);
      printf("    chunk %lld: nbytes %d\n", (long long)i, nb);
      if (needs_free) free(chunk);
    }
    blosc2_schunk_free(back);
  }
  free(data);
  blosc2_destroy();
  printf("OK\n");
  return 0;
}
