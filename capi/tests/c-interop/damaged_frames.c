/* Frames with a damaged chunk, opened by path (blosc2_schunk_open).

   `make DIR` writes, in the existing directory DIR, a sparse frame
   DIR/s.b2frame and a contiguous file frame DIR/c.b2frame, each of three
   chunks of 1000 int32 items (item j of chunk i is i * 1000 + j), at
   clevel 0 so that each chunk's items follow its 32-byte header.

   `read PATH` opens PATH and prints its chunk count, then for each chunk
   the sum of its items or E (the read failed), then OK. An open that
   fails prints "open: NULL" (and OK). The caller damages the frames in
   between (a chunk file removed, a chunk's cbytes set past the frame):
   built against our library and C-Blosc2's, the two print the same
   lines.

   `append PATH` opens PATH and appends a fourth chunk: prints "append: "
   and the return code's sign (E for an error, else the new chunk count),
   then OK. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

#define N 1000

static int make_one(const char *path, int contiguous) {
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.clevel = 0;
  cp.nthreads = 1;
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_storage st = {.contiguous = contiguous, .urlpath = (char *)path, .cparams = &cp, .dparams = &dp};
  blosc2_remove_urlpath(path);
  blosc2_schunk *sc = blosc2_schunk_new(&st);
  if (sc == NULL) return -1;
  int32_t data[N];
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < N; j++) data[j] = i * N + j;
    if (blosc2_schunk_append_buffer(sc, data, sizeof(data)) != i + 1) return -1;
  }
  blosc2_schunk_free(sc);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s make DIR | read PATH | append PATH\n", argv[0]);
    return 2;
  }
  blosc2_init();
  if (strcmp(argv[1], "make") == 0) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/s.b2frame", argv[2]);
    if (make_one(path, 0) < 0) return 1;
    snprintf(path, sizeof(path), "%s/c.b2frame", argv[2]);
    if (make_one(path, 1) < 0) return 1;
  } else if (strcmp(argv[1], "read") == 0) {
    blosc2_schunk *sc = blosc2_schunk_open(argv[2]);
    if (sc == NULL) {
      printf("open: NULL\n");
    } else {
      printf("nchunks: %lld\n", (long long)sc->nchunks);
      for (int64_t i = 0; i < sc->nchunks; i++) {
        int32_t data[N];
        int rc = blosc2_schunk_decompress_chunk(sc, i, data, sizeof(data));
        if (rc != (int)sizeof(data)) {
          printf("chunk %lld: E\n", (long long)i);
          continue;
        }
        long long sum = 0;
        for (int j = 0; j < N; j++) sum += data[j];
        printf("chunk %lld: %lld\n", (long long)i, sum);
      }
      blosc2_schunk_free(sc);
    }
  } else if (strcmp(argv[1], "append") == 0) {
    blosc2_schunk *sc = blosc2_schunk_open(argv[2]);
    if (sc == NULL) {
      printf("open: NULL\n");
    } else {
      int32_t data[N];
      for (int j = 0; j < N; j++) data[j] = 3 * N + j;
      int64_t rc = blosc2_schunk_append_buffer(sc, data, sizeof(data));
      if (rc < 0) {
        printf("append: E\n");
      } else {
        printf("append: %lld\n", (long long)rc);
      }
      blosc2_schunk_free(sc);
    }
  } else {
    return 2;
  }
  printf("OK\n");
  blosc2_destroy();
  return 0;
}
