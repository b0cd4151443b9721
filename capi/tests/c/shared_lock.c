/* Frame locking (BLOSC_LOCKING=1): read-only super-chunk calls share the
   frame's lock, as C-Blosc2's do; calls that change the frame take it
   exclusively. A user filter (id 247, the identity) runs inside the calls
   while the lock is held and checks, from there:
   - during a read (blosc2_schunk_decompress_chunk, get_slice_buffer),
     another open file description of the sidecar `.b2lock` gets
     LOCK_SH|LOCK_NB (a second reader is not blocked) but not
     LOCK_EX|LOCK_NB (a writer is), and a second process, released from
     inside the read, opens the frame and reads a chunk while the first
     read is still in progress (it would wait for the end of the first
     read, and this one for it, if reads were exclusive);
   - during a write (append_buffer, and inside blosc2_schunk_lock), the
     sidecar refuses LOCK_SH|LOCK_NB (readers wait for writers), and a
     process released during the write reads the frame only once the
     write is over: it sees the new chunk.
   Reads leave the sidecar's generation counter (byte 8) as it is; writes
   bump it, and a second handle of this process follows the write on its
   next read. Prints OK and exits 0 when every check holds. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include "blosc2.h"

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)
#define N 1000
#define FRAME "shared_lock.b2frame"
#define SIDECAR FRAME ".b2lock"

/* What the filter does when it next runs in this process. */
enum { IDLE, PROBE_READ, PROBE_READ_PEER, PROBE_WRITE };
static int mode = IDLE;
/* Results of the probes made inside the calls (-1: not run). */
static int shared_ok = -1, excl_ok = -1, peer_done = -1;
/* Pipes to the two child processes: go (parent writes), done (child writes). */
static int go1[2], done1[2], go2[2], done2[2];

/* 1: flock(op | LOCK_NB) on a new open file description of the sidecar
   succeeded, 0: it would block, -1: another error. */
static int try_lock(int op) {
  int fd = open(SIDECAR, O_RDWR);
  if (fd < 0) return -1;
  int r = flock(fd, op | LOCK_NB);
  int e = errno;
  if (r == 0) flock(fd, LOCK_UN);
  close(fd);
  return r == 0 ? 1 : (e == EWOULDBLOCK ? 0 : -1);
}

/* Wait up to `ms` for the child's one-byte answer on `fd`; the byte, or -1
   when none came in time. */
static int answer(int fd, int ms) {
  struct pollfd p = {fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return -1;
  unsigned char b;
  return read(fd, &b, 1) == 1 ? b : -1;
}

static void probe(void) {
  if (mode == PROBE_READ) {
    mode = IDLE;
    shared_ok = try_lock(LOCK_SH);
    excl_ok = try_lock(LOCK_EX);
  } else if (mode == PROBE_READ_PEER) {
    mode = IDLE;
    shared_ok = try_lock(LOCK_SH);
    excl_ok = try_lock(LOCK_EX);
    /* The reader process reads now, while this read holds the lock; a
       generous bound only keeps a broken build from hanging. */
    if (write(go1[1], "g", 1) != 1) return;
    peer_done = answer(done1[0], 60000);
  } else if (mode == PROBE_WRITE) {
    mode = IDLE;
    shared_ok = try_lock(LOCK_SH);
    excl_ok = try_lock(LOCK_EX);
    /* The second process starts reading now; it must still be waiting when
       this write ends (a late answer here would be a reader let in). */
    if (write(go2[1], "g", 1) != 1) return;
    peer_done = answer(done2[0], 300);
  }
}

static int fwd(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
               blosc2_cparams *cparams, uint8_t id) {
  (void)meta; (void)cparams; (void)id;
  probe();
  memcpy(dest, src, size);
  return 0;
}

static int bwd(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
               blosc2_dparams *dparams, uint8_t id) {
  (void)meta; (void)dparams; (void)id;
  probe();
  memcpy(dest, src, size);
  return 0;
}

static void fill(int32_t *v, int32_t start) {
  for (int i = 0; i < N; i++) v[i] = start + i;
}

static uint64_t generation(void) {
  uint64_t g = 0;
  int fd = open(SIDECAR, O_RDONLY);
  if (fd < 0) return (uint64_t)-1;
  if (pread(fd, &g, 8, 8) != 8) g = 0;
  close(fd);
  return g;
}

/* A child: wait for the go byte, open the frame, read its last chunk and
   answer 'y' when it holds `start + i` for chunk number `want - 1` and the
   frame has `want` chunks. */
static int reader_child(int go, int done, int64_t want) {
  unsigned char b;
  if (read(go, &b, 1) != 1) return 2;
  blosc2_init();
  blosc2_filter filter = {247, "ident", 1, fwd, bwd};
  blosc2_register_filter(&filter);
  blosc2_schunk *s = blosc2_schunk_open(FRAME);
  unsigned char ans = 'n';
  if (s != NULL) {
    int32_t got[N], exp[N];
    fill(exp, (int32_t)(want - 1) * N);
    int64_t last = s->nchunks - 1;
    int rc = blosc2_schunk_decompress_chunk(s, last, got, sizeof(got));
    if (s->nchunks == want && rc == (int)sizeof(got) && memcmp(got, exp, sizeof(got)) == 0) {
      ans = 'y';
    }
    blosc2_schunk_free(s);
  }
  if (write(done, &ans, 1) != 1) return 3;
  blosc2_destroy();
  return 0;
}

int main(void) {
  setenv("BLOSC_LOCKING", "1", 1);
  unlink(FRAME);
  unlink(SIDECAR);
  if (pipe(go1) || pipe(done1) || pipe(go2) || pipe(done2)) return 1;
  /* Both children are forked before the library is initialised. */
  pid_t c1 = fork();
  if (c1 == 0) _exit(reader_child(go1[0], done1[1], 1));
  pid_t c2 = fork();
  if (c2 == 0) _exit(reader_child(go2[0], done2[1], 2));
  CHECK(c1 > 0 && c2 > 0);

  blosc2_init();
  blosc2_filter filter = {247, "ident", 1, fwd, bwd};
  CHECK(blosc2_register_filter(&filter) == 0);
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.typesize = 4;
  cp.nthreads = 1;
  cp.filters[0] = 247; /* then the default shuffle */
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  dp.nthreads = 1;
  blosc2_storage st = {.contiguous = true, .urlpath = FRAME, .cparams = &cp, .dparams = &dp};
  blosc2_schunk *s = blosc2_schunk_new(&st);
  CHECK(s != NULL);
  int32_t data[N], back[N];
  fill(data, 0);
  CHECK(blosc2_schunk_append_buffer(s, data, sizeof(data)) == 1);
  uint64_t g0 = generation();
  CHECK(g0 != (uint64_t)-1);

  /* A read holds the lock shared: another reader gets in, a writer not;
     the reader process reads the whole frame meanwhile. */
  mode = PROBE_READ_PEER;
  CHECK(blosc2_schunk_decompress_chunk(s, 0, back, sizeof(back)) == (int)sizeof(back));
  CHECK(memcmp(back, data, sizeof(data)) == 0);
  CHECK(shared_ok == 1);
  CHECK(excl_ok == 0);
  CHECK(peer_done == 'y');
  int status;
  CHECK(waitpid(c1, &status, 0) == c1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  /* A read does not bump the generation. */
  CHECK(generation() == g0);

  /* get_slice_buffer reads under the shared lock too. */
  shared_ok = excl_ok = -1;
  mode = PROBE_READ;
  CHECK(blosc2_schunk_get_slice_buffer(s, 10, 20, back) == 0);
  CHECK(back[0] == 10 && back[9] == 19);
  CHECK(shared_ok == 1);
  CHECK(excl_ok == 0);
  CHECK(generation() == g0);

  /* A second handle, opened now, follows the write below on its next read. */
  blosc2_schunk *s2 = blosc2_schunk_open(FRAME);
  CHECK(s2 != NULL && s2->nchunks == 1);

  /* A write holds it exclusively: no reader gets in, and the reader
     process started during the write answers only after it. */
  shared_ok = excl_ok = peer_done = -1;
  mode = PROBE_WRITE;
  fill(data, N);
  CHECK(blosc2_schunk_append_buffer(s, data, sizeof(data)) == 2);
  CHECK(shared_ok == 0);
  CHECK(excl_ok == 0);
  CHECK(peer_done == -1);
  CHECK(answer(done2[0], 60000) == 'y');
  CHECK(waitpid(c2, &status, 0) == c2 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(generation() > g0);

  CHECK(blosc2_schunk_decompress_chunk(s2, 1, back, sizeof(back)) == (int)sizeof(back));
  CHECK(memcmp(back, data, sizeof(data)) == 0);
  CHECK(s2->nchunks == 2);

  /* blosc2_schunk_lock takes it exclusively; reads inside nest in it. */
  CHECK(blosc2_schunk_lock(s) == 0);
  CHECK(try_lock(LOCK_SH) == 0);
  CHECK(blosc2_schunk_decompress_chunk(s, 1, back, sizeof(back)) == (int)sizeof(back));
  CHECK(try_lock(LOCK_SH) == 0);
  CHECK(blosc2_schunk_unlock(s) == 0);
  CHECK(try_lock(LOCK_EX) == 1);

  blosc2_schunk_free(s2);
  blosc2_schunk_free(s);
  blosc2_remove_urlpath(FRAME);
  unlink(SIDECAR);
  blosc2_destroy();
  printf("OK\n");
  return 0;
}
