/* The blosc2_stdio_* and blosc2_stdio_mmap_* functions on real files:
   stdio write/read/size/truncate, and the mmap modes w+ (the mapping and the
   file grow with the writes), r (read-only), c (changes stay in memory).
   Prints OK and exits 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"
#include "blosc2/blosc2-stdio.h"

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)

int main(void) {
  const char *path = "stdio_backends.bin";
  uint8_t data[1000], back[1000];
  for (int i = 0; i < 1000; i++) data[i] = (uint8_t)(i * 7 + 3);
  blosc2_init();

  /* stdio */
  CHECK(blosc2_stdio_open("no/such/dir/file", "rb", NULL) == NULL);
  void *f = blosc2_stdio_open(path, "w+b", NULL);
  CHECK(f != NULL);
  CHECK(blosc2_stdio_write(data, 1, 100, 0, f) == 100);
  CHECK(blosc2_stdio_write(data + 100, 2, 5, 200, f) == 5);
  CHECK(blosc2_stdio_size(f) == 210);
  void *p = back;
  CHECK(blosc2_stdio_read(&p, 2, 5, 200, f) == 5 && p == back);
  CHECK(memcmp(back, data + 100, 10) == 0);
  CHECK(blosc2_stdio_read(&p, 1, 100, 0, f) == 100 && memcmp(back, data, 100) == 0);
  CHECK(blosc2_stdio_truncate(f, 50) == 0 && blosc2_stdio_size(f) == 50);
  CHECK(blosc2_stdio_read(&p, 1, 20, 40, f) == 10); /* short read at the end */
  CHECK(blosc2_stdio_close(f) == 0);
  CHECK(blosc2_stdio_destroy(NULL) == 0);

  /* mmap w+: a small first mapping that must grow */
  blosc2_stdio_mmap m = BLOSC2_STDIO_MMAP_DEFAULTS;
  m.mode = "w+";
  m.initial_mapping_size = 64;
  CHECK(blosc2_stdio_mmap_open(path, "w+b", &m) == &m);
  CHECK(blosc2_stdio_mmap_open(path, "w+b", &m) == &m); /* already open */
  CHECK(blosc2_stdio_mmap_size(&m) == 0);
  CHECK(blosc2_stdio_mmap_write(data, 1, 1000, 0, &m) == 1000);
  CHECK(m.mapping_size >= 1000 && blosc2_stdio_mmap_size(&m) == 1000);
  p = NULL;
  CHECK(blosc2_stdio_mmap_read(&p, 4, 5, 10, &m) == 5 && memcmp(p, data + 10, 20) == 0);
  CHECK(blosc2_stdio_mmap_read(&p, 1, 2, 999, &m) == 0 && p == NULL);
  CHECK(blosc2_stdio_mmap_truncate(&m, 500) == 0 && blosc2_stdio_mmap_size(&m) == 500);
  CHECK(blosc2_stdio_mmap_close(&m) == 0);
  CHECK(blosc2_stdio_mmap_destroy(&m) == 0);
  CHECK(m.addr == NULL);
  f = blosc2_stdio_open(path, "rb", NULL);
  CHECK(f != NULL && blosc2_stdio_size(f) == 500);
  p = back;
  CHECK(blosc2_stdio_read(&p, 1, 500, 0, f) == 500 && memcmp(back, data, 500) == 0);
  CHECK(blosc2_stdio_close(f) == 0);

  /* mmap r: reads only */
  blosc2_stdio_mmap r = BLOSC2_STDIO_MMAP_DEFAULTS;
  CHECK(blosc2_stdio_mmap_open(path, "rb", &r) == &r);
  CHECK(blosc2_stdio_mmap_read(&p, 1, 500, 0, &r) == 500 && memcmp(p, data, 500) == 0);
  CHECK(blosc2_stdio_mmap_write(data, 1, 1, 0, &r) == 0);
  CHECK(blosc2_stdio_mmap_destroy(&r) == 0);

  /* mmap c: changes in memory only; the struct on the heap, freed by destroy */
  blosc2_stdio_mmap *c = malloc(sizeof(blosc2_stdio_mmap));
  *c = BLOSC2_STDIO_MMAP_DEFAULTS;
  c->mode = "c";
  c->needs_free = true;
  CHECK(blosc2_stdio_mmap_open(path, "rb", c) == c);
  uint8_t x[3] = {9, 9, 9};
  CHECK(blosc2_stdio_mmap_write(x, 1, 3, 0, c) == 3);
  CHECK(blosc2_stdio_mmap_write(x, 1, 3, 600, c) == 3 && blosc2_stdio_mmap_size(c) == 603);
  CHECK(blosc2_stdio_mmap_read(&p, 1, 3, 0, c) == 3 && memcmp(p, x, 3) == 0);
  CHECK(blosc2_stdio_mmap_destroy(c) == 0);
  f = blosc2_stdio_open(path, "rb", NULL);
  p = back;
  CHECK(blosc2_stdio_size(f) == 500);
  CHECK(blosc2_stdio_read(&p, 1, 500, 0, f) == 500 && memcmp(back, data, 500) == 0);
  CHECK(blosc2_stdio_close(f) == 0);

  /* bad modes and missing files */
  blosc2_stdio_mmap bad = BLOSC2_STDIO_MMAP_DEFAULTS;
  bad.mode = "x";
  CHECK(blosc2_stdio_mmap_open(path, "rb", &bad) == NULL);
  bad.mode = "r";
  CHECK(blosc2_stdio_mmap_open("no/such/dir/file", "rb", &bad) == NULL);
  CHECK(blosc2_stdio_mmap_destroy(&bad) == -1);

  remove(path);
  blosc2_destroy();
  printf("OK\n");
  return 0;
}
