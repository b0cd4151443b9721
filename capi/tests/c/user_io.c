/* User-defined I/O (blosc2_register_io_cb): a super-chunk created and
   reopened with a storage whose io names registered callbacks reads and
   writes every file of its frame through them. The callbacks redirect each
   path P to P.real, so an access that bypassed them would touch P (which
   then must not exist, or for a sparse frame's directory must stay empty).
   Counts every callback. Prints OK and exits 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>
#include "blosc2.h"
#include "blosc2/blosc2-stdio.h"

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)

typedef struct { int open, close, size, write, read, truncate, destroy; } counts;
typedef struct { void *f; counts *n; } stream;

/* "dir/name" -> "dir.real/name" for the sparse frame, "file" -> "file.real". */
static void redirect(const char *path, char *out) {
  const char *slash = strrchr(path, '/');
  if (slash) snprintf(out, 512, "%.*s.real%s", (int)(slash - path), path, slash);
  else snprintf(out, 512, "%s.real", path);
}
static void *my_open(const char *path, const char *mode, void *params) {
  char real[512];
  redirect(path, real);
  void *f = blosc2_stdio_open(real, mode, NULL);
  if (f == NULL) return NULL;
  stream *s = malloc(sizeof(stream));
  s->f = f;
  s->n = params;
  s->n->open++;
  return s;
}
static int my_close(void *st) {
  stream *s = st;
  s->n->close++;
  int rc = blosc2_stdio_close(s->f);
  free(s);
  return rc;
}
static int64_t my_size(void *st) { stream *s = st; s->n->size++; return blosc2_stdio_size(s->f); }
static int64_t my_write(const void *p, int64_t size, int64_t n, int64_t pos, void *st) {
  stream *s = st; s->n->write++; return blosc2_stdio_write(p, size, n, pos, s->f);
}
static int64_t my_read(void **p, int64_t size, int64_t n, int64_t pos, void *st) {
  stream *s = st; s->n->read++; return blosc2_stdio_read(p, size, n, pos, s->f);
}
static int my_truncate(void *st, int64_t size) { stream *s = st; s->n->truncate++; return blosc2_stdio_truncate(s->f, size); }
static int my_destroy(void *params) { ((counts *)params)->destroy++; return 0; }

static int dir_is_empty(const char *path) {
  DIR *d = opendir(path);
  if (d == NULL) return 0;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) != NULL) if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n == 0;
}

static int run(bool contiguous, const char *urlpath) {
  counts n = {0};
  blosc2_io io = {.id = 201, .name = "counting", .params = &n};
  blosc2_cparams cparams = BLOSC2_CPARAMS_DEFAULTS;
  cparams.typesize = 4;
  blosc2_storage storage = {.cparams = &cparams, .contiguous = contiguous,
                            .urlpath = (char *)urlpath, .io = &io};
  int32_t data[5000], back[5000];
  for (int i = 0; i < 5000; i++) data[i] = i * 3;
  if (!contiguous) {
    char real[512];
    snprintf(real, sizeof real, "%s.real", urlpath);
    mkdir(real, 0755);
  }
  blosc2_schunk *sc = blosc2_schunk_new(&storage);
  CHECK(sc != NULL);
  for (int i = 0; i < 4; i++) CHECK(blosc2_schunk_append_buffer(sc, data, sizeof data) == i + 1);
  CHECK(blosc2_vlmeta_add(sc, "note", (uint8_t *)"hi", 2, NULL) >= 0);
  CHECK(n.open > 0 && n.open == n.close && n.write > 0 && n.truncate > 0);
  int writes = n.write;
  blosc2_schunk *again = blosc2_schunk_open_udio(urlpath, &io);
  CHECK(again != NULL && again->nchunks == 4);
  CHECK(again->storage->io->id == 201);
  int reads = n.read;
  for (int i = 0; i < 4; i++) {
    CHECK(blosc2_schunk_decompress_chunk(again, i, back, sizeof back) == (int)sizeof back);
    CHECK(memcmp(back, data, sizeof data) == 0);
  }
  CHECK(n.read > reads && n.write == writes && n.open == n.close && n.size > 0);
  uint8_t *content;
  int32_t len;
  CHECK(blosc2_vlmeta_get(again, "note", &content, &len) >= 0 && len == 2 && content[0] == 'h');
  free(content);
  blosc2_schunk_free(again);
  blosc2_schunk_free(sc);
  CHECK(n.destroy == 2);
  /* Nothing went around the callbacks. */
  struct stat st;
  if (contiguous) CHECK(stat(urlpath, &st) != 0);
  else CHECK(dir_is_empty(urlpath));
  /* An unregistered io id: no super-chunk. */
  blosc2_io other = {.id = 202, .name = "none", .params = NULL};
  storage.io = &other;
  CHECK(blosc2_schunk_new(&storage) == NULL);
  CHECK(blosc2_schunk_open_udio(urlpath, &other) == NULL);
  return 0;
}

int main(void) {
  blosc2_init();
  blosc2_io_cb cb = {0};
  cb.id = 201;
  cb.name = "counting";
  cb.is_allocation_necessary = true;
  cb.open = my_open;
  cb.close = my_close;
  cb.size = my_size;
  cb.write = my_write;
  cb.read = my_read;
  cb.truncate = my_truncate;
  cb.destroy = my_destroy;
  CHECK(blosc2_register_io_cb(&cb) == 0);
  CHECK(blosc2_register_io_cb(&cb) == 0);
  blosc2_io_cb low = cb;
  low.id = 100;
  CHECK(blosc2_register_io_cb(&low) < 0);
  CHECK(blosc2_register_io_cb(NULL) < 0);
  blosc2_io_cb *got = blosc2_get_io_cb(201);
  CHECK(got != NULL && got->open == my_open && got->id == 201);
  CHECK(blosc2_get_io_cb(0) != NULL && blosc2_get_io_cb(0)->open == blosc2_stdio_open);
  CHECK(blosc2_get_io_cb(1) != NULL && !blosc2_get_io_cb(1)->is_allocation_necessary);
  CHECK(blosc2_get_io_cb(203) == NULL);

  system("rm -rf user_io.b2frame user_io.b2frame.real user_io_s.b2frame user_io_s.b2frame.real");
  if (run(true, "user_io.b2frame")) return 1;
  if (run(false, "user_io_s.b2frame")) return 1;
  blosc2_destroy();
  printf("OK\n");
  return 0;
}
