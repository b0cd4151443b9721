/* oxiblosc's own declarations for C-Blosc2 3.3.2's internal-header tests
   (written for our libblosc2.so, not copied from C-Blosc2): the portable
   byte-shuffle kernels.  Byte j of item i goes to dest[j * nitems + i];
   trailing bytes (blocksize % bytesoftype) are copied.  Null pointers or a
   non-positive type size: nothing done. */
#ifndef OXIBLOSC_PEER_SHUFFLE_GENERIC_H
#define OXIBLOSC_PEER_SHUFFLE_GENERIC_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

void shuffle_generic(const int32_t bytesoftype, const int32_t blocksize,
                     const uint8_t *_src, uint8_t *_dest);
void unshuffle_generic(const int32_t bytesoftype, const int32_t blocksize,
                       const uint8_t *_src, uint8_t *_dest);

#ifdef __cplusplus
}
#endif

#endif
