/*
  oxiblosc's stand-in for C-Blosc2's internal "blosc-private.h", for the
  peer suite's internal-header test programs (see ../README.md). Written
  for oxiblosc's libblosc2.so: only what those programs use.
*/

#ifndef OXIBLOSC_PEER_BLOSC_PRIVATE_H
#define OXIBLOSC_PEER_BLOSC_PRIVATE_H

#include "blosc2.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Copy `itemsize` bytes from `src` to `dest`, reversing their order on a
   little-endian host for 2-, 4- and 8-byte items (Blosc2 frames store
   their integers big-endian); other sizes are copied as they are. */
static inline void oxiblosc_swap_copy(void *dest, const void *src, int itemsize) {
  const uint8_t *s = (const uint8_t *)src;
  uint8_t *d = (uint8_t *)dest;
  const uint16_t probe = 1;
  const bool little = *(const uint8_t *)&probe == 1;
  if (!little || (itemsize != 2 && itemsize != 4 && itemsize != 8)) {
    memmove(d, s, (size_t)itemsize);
    return;
  }
  uint8_t tmp[8];
  for (int i = 0; i < itemsize; i++) {
    tmp[i] = s[itemsize - 1 - i];
  }
  memcpy(d, tmp, (size_t)itemsize);
}

/* Host integer at `src` to big-endian bytes at `dest`. */
#define to_big(dest, src, itemsize) oxiblosc_swap_copy((dest), (src), (int)(itemsize))
/* Big-endian bytes at `src` to a host integer at `dest`. */
#define from_big(dest, src, itemsize) oxiblosc_swap_copy((dest), (src), (int)(itemsize))

/* Bytes of the (uncompressed) offsets index of a frame with `nchunks`
   chunks (8 per chunk); false when `nchunks` is negative or the size does
   not fit an int32 (then `*off_nbytes` is untouched). */
static inline bool blosc2_nchunks_to_offsets_nbytes(int64_t nchunks, int32_t *off_nbytes) {
  if (nchunks < 0 || nchunks > (int64_t)(INT32_MAX / 8)) {
    return false;
  }
  if (off_nbytes != NULL) {
    *off_nbytes = (int32_t)(nchunks * 8);
  }
  return true;
}

#endif /* OXIBLOSC_PEER_BLOSC_PRIVATE_H */
