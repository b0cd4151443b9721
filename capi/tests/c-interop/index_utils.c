/* blosc2.h's index and file utilities across libraries:
   blosc2_unidim_to_multidim and blosc2_multidim_to_unidim over a few
   shapes and items (round trips printed), blosc2_rename_urlpath of a
   file, of a directory and of a missing path (return codes printed), and
   blosc2_get_blosc2_stdio_mmap_defaults' fields. Built against our
   libblosc2 and C-Blosc2's, the two print the same lines; OK last. Run in
   an empty directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "blosc2.h"

int main(void) {
  blosc2_init();
  int ok = 1;
  int64_t shapes[3][4] = {{7, 0, 0, 0}, {4, 5, 0, 0}, {3, 1, 4, 2}};
  uint8_t ndims[3] = {1, 2, 4};
  for (int s = 0; s < 3; s++) {
    int n = ndims[s];
    int64_t strides[4];
    strides[n - 1] = 1;
    for (int j = n - 2; j >= 0; j--) strides[j] = strides[j + 1] * shapes[s][j + 1];
    int64_t total = 1;
    for (int j = 0; j < n; j++) total *= shapes[s][j];
    /* Every item, and a few past the end (the first index grows). */
    for (int64_t i = 0; i < total + 3; i += 1 + (total > 20)) {
      int64_t idx[4] = {-1, -1, -1, -1}, back = -1;
      blosc2_unidim_to_multidim(ndims[s], shapes[s], i, idx);
      blosc2_multidim_to_unidim(idx, (int8_t)n, strides, &back);
      printf("%d/%lld:", n, (long long)i);
      for (int j = 0; j < n; j++) printf(" %lld", (long long)idx[j]);
      printf(" -> %lld\n", (long long)back);
      if (back != i) ok = 0;
    }
  }
  int64_t none = 42;
  blosc2_multidim_to_unidim(NULL, 0, NULL, &none);
  printf("no dimensions -> %lld\n", (long long)none);

  FILE *f = fopen("a.bin", "wb");
  fputs("x", f);
  fclose(f);
  mkdir("d1", 0755);
  f = fopen("d1/chunk", "wb");
  fclose(f);
  printf("rename file: %d\n", blosc2_rename_urlpath("a.bin", "b.bin"));
  struct stat st;
  printf("renamed file there: %d, old gone: %d\n", stat("b.bin", &st) == 0, stat("a.bin", &st) != 0);
  printf("rename dir: %d\n", blosc2_rename_urlpath("d1", "d2"));
  printf("renamed dir there: %d\n", stat("d2/chunk", &st) == 0);
  printf("rename missing: %d\n", blosc2_rename_urlpath("nope", "other") < 0);
  printf("rename NULL: %d\n", blosc2_rename_urlpath(NULL, "other"));

  blosc2_stdio_mmap m = blosc2_get_blosc2_stdio_mmap_defaults();
  printf("mmap defaults: mode %s size %zu needs_free %d addr %p urlpath %p file_size %zu "
         "mapping_size %zu memory_only %d file %p fd %d access %lld map %lld\n",
         m.mode, m.initial_mapping_size, m.needs_free, (void *)m.addr, (void *)m.urlpath,
         m.file_size, m.mapping_size, m.is_memory_only, (void *)m.file, m.fd,
         (long long)m.access_flags, (long long)m.map_flags);
  blosc2_destroy();
  if (ok) printf("OK\n");
  return ok ? 0 : 1;
}
