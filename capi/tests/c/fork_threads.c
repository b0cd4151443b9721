/* The library used after fork() with threads (C-Blosc's test_forksafe
   uses random data, whose chunk is stored raw; here the data compresses,
   so the blocks go to the thread pool on both sides of the fork). The
   parent compresses and decompresses on 4 threads, forks, and the child
   does it again, with the global functions and with a context; the
   child must end within 10 s with the data back. Prints OK and exits 0
   when it does. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "blosc2.h"

#define N (4 * 1024 * 1024)

static int roundtrip(const float *src, float *back, char *chunk) {
  int cbytes = blosc2_compress(5, BLOSC_SHUFFLE, sizeof(float), src, N, chunk,
                               N + BLOSC2_MAX_OVERHEAD);
  if (cbytes <= 0 || cbytes >= N) return 1;
  if (blosc2_decompress(chunk, cbytes, back, N) != N) return 2;
  if (memcmp(src, back, N) != 0) return 3;
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.nthreads = 2;
  cp.typesize = sizeof(float);
  blosc2_context *c = blosc2_create_cctx(cp);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 2;
  blosc2_context *d = blosc2_create_dctx(dp);
  cbytes = blosc2_compress_ctx(c, src, N, chunk, N + BLOSC2_MAX_OVERHEAD);
  int r = 0;
  if (cbytes <= 0 || cbytes >= N) r = 4;
  else if (blosc2_decompress_ctx(d, chunk, cbytes, back, N) != N) r = 5;
  else if (memcmp(src, back, N) != 0) r = 6;
  blosc2_free_ctx(c);
  blosc2_free_ctx(d);
  return r;
}

int main(void) {
  blosc2_init();
  blosc2_set_nthreads(4);
  float *src = malloc(N), *back = malloc(N);
  char *chunk = malloc(N + BLOSC2_MAX_OVERHEAD);
  for (int i = 0; i < N / 4; i++) src[i] = (float)(i % 1000) * 0.5f;
  int r = roundtrip(src, back, chunk);
  if (r != 0) { printf("parent failed: %d\n", r); return 1; }
  pid_t pid = fork();
  if (pid == 0) {
    memset(back, 0, N);
    _exit(roundtrip(src, back, chunk));
  }
  int status = 0;
  for (int waited = 0;; waited += 10) {
    if (waitpid(pid, &status, WNOHANG) == pid) break;
    if (waited >= 10000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      printf("the child hung after fork\n");
      return 1;
    }
    usleep(10000);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("the child failed: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 1;
  }
  r = roundtrip(src, back, chunk);
  if (r != 0) { printf("parent failed after fork: %d\n", r); return 1; }
  free(src); free(back); free(chunk);
  blosc2_destroy();
  printf("OK\n");
  return 0;
}
