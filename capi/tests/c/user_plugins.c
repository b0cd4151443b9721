/* User-registered codecs and filters through the C ABI: an arange codec
   (id 250: stores start and step) and a +17 filter (id 246), registered with
   blosc2_register_codec / blosc2_register_filter and used by
   blosc2_compress_ctx / blosc2_decompress_ctx / blosc2_getitem_ctx.
   Prints OK and exits 0 when every check holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blosc2.h"

#define CHECK(c) do { if (!(c)) { printf("FAILED line %d: %s\n", __LINE__, #c); return 1; } } while (0)
#define N 100000

static int calls_enc = 0, calls_dec = 0;

static int arange_encoder(const uint8_t *in, int32_t in_len, uint8_t *out, int32_t out_len,
                          uint8_t meta, blosc2_cparams *cparams, const void *chunk) {
  (void)meta; (void)chunk;
  calls_enc++;
  if (cparams->compcode != 250) return -1;
  const int32_t *v = (const int32_t *)in;
  int32_t n = in_len / 4;
  if (n < 2 || in_len % 4 != 0 || out_len < 8) return 0;
  int32_t step = v[1] - v[0];
  for (int32_t i = 1; i < n - 1; i++) if (v[i + 1] - v[i] != step) return 0;
  memcpy(out, &v[0], 4);
  memcpy(out + 4, &step, 4);
  return 8;
}

static int arange_decoder(const uint8_t *in, int32_t in_len, uint8_t *out, int32_t out_len,
                          uint8_t meta, blosc2_dparams *dparams, const void *chunk) {
  (void)meta; (void)dparams; (void)chunk;
  calls_dec++;
  if (in_len != 8) return -1;
  int32_t start, step;
  memcpy(&start, in, 4);
  memcpy(&step, in + 4, 4);
  for (int32_t i = 0; i < out_len / 4; i++) ((int32_t *)out)[i] = start + i * step;
  return out_len;
}

static int plus17(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                  blosc2_cparams *cparams, uint8_t id) {
  if (meta != 101 || id != 246 || cparams->typesize != 4) return -1;
  for (int32_t i = 0; i < size; i++) dest[i] = (uint8_t)(src[i] + 17);
  return 0;
}

static int minus17(const uint8_t *src, uint8_t *dest, int32_t size, uint8_t meta,
                   blosc2_dparams *dparams, uint8_t id) {
  (void)dparams;
  if (meta != 101 || id != 246) return -1;
  for (int32_t i = 0; i < size; i++) dest[i] = (uint8_t)(src[i] - 17);
  return 0;
}

int main(void) {
  static int32_t data[N], back[N];
  static uint8_t chunk[N * 4 + BLOSC2_MAX_OVERHEAD];
  for (int i = 0; i < N; i++) data[i] = 7 + 3 * i;
  blosc2_init();

  blosc2_codec codec = {250, "arange", 250, 1, arange_encoder, arange_decoder};
  CHECK(blosc2_register_codec(&codec) == 0);
  blosc2_codec bad = {10, "bad", 10, 1, arange_encoder, arange_decoder};
  CHECK(blosc2_register_codec(&bad) < 0);
  blosc2_filter filter = {246, "plus17", 1, plus17, minus17};
  CHECK(blosc2_register_filter(&filter) == 0);

  /* The codec: format 6, id in byte 22, 8 bytes per stream. */
  blosc2_cparams cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = 250;
  cp.typesize = 4;
  memset(cp.filters, 0, sizeof(cp.filters));
  blosc2_context *c = blosc2_create_cctx(cp);
  int csize = blosc2_compress_ctx(c, data, sizeof(data), chunk, sizeof(chunk));
  CHECK(csize > 0 && csize < 2000);
  CHECK((chunk[2] >> 5) == 6 && chunk[22] == 250);
  CHECK(calls_enc > 0);
  blosc2_dparams dp = BLOSC2_DPARAMS_DEFAULTS;
  blosc2_context *d = blosc2_create_dctx(dp);
  CHECK(blosc2_decompress_ctx(d, chunk, csize, back, sizeof(back)) == (int)sizeof(data));
  CHECK(memcmp(data, back, sizeof(data)) == 0 && calls_dec > 0);
  int32_t items[3];
  CHECK(blosc2_getitem_ctx(d, chunk, csize, 5000, 3, items, sizeof(items)) == 12);
  CHECK(items[0] == data[5000] && items[2] == data[5002]);
  blosc2_free_ctx(c);

  /* The filter, before shuffle, with lz4. */
  cp = BLOSC2_CPARAMS_DEFAULTS;
  cp.compcode = BLOSC_LZ4;
  cp.typesize = 4;
  memset(cp.filters, 0, sizeof(cp.filters));
  cp.filters[0] = 246;
  cp.filters_meta[0] = 101;
  cp.filters[1] = BLOSC_SHUFFLE;
  c = blosc2_create_cctx(cp);
  csize = blosc2_compress_ctx(c, data, sizeof(data), chunk, sizeof(chunk));
  CHECK(csize > 0 && csize < (int)sizeof(data) && chunk[16] == 246);
  memset(back, 0, sizeof(back));
  CHECK(blosc2_decompress_ctx(d, chunk, csize, back, sizeof(back)) == (int)sizeof(data));
  CHECK(memcmp(data, back, sizeof(data)) == 0);
  /* A failing forward callback (wrong meta) fails the compression. */
  blosc2_free_ctx(c);
  cp.filters_meta[0] = 5;
  c = blosc2_create_cctx(cp);
  CHECK(blosc2_compress_ctx(c, data, sizeof(data), chunk, sizeof(chunk)) < 0);
  blosc2_free_ctx(c);
  blosc2_free_ctx(d);
  blosc2_destroy();
  printf("OK\n");
  return 0;
}
