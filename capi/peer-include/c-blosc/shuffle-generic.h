/* oxiblosc's own declarations for C-Blosc 1.21.6's internal-header tests:
   the portable (scalar) shuffle kernels of our libblosc.so.1. */
#ifndef OXIBLOSC_PEER_SHUFFLE_GENERIC_H
#define OXIBLOSC_PEER_SHUFFLE_GENERIC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

void blosc_internal_shuffle_generic(const size_t bytesoftype, const size_t blocksize,
                                    const uint8_t* const _src, uint8_t* const _dest);
void blosc_internal_unshuffle_generic(const size_t bytesoftype, const size_t blocksize,
                                      const uint8_t* const _src, uint8_t* const _dest);

#ifdef __cplusplus
}
#endif

#endif
