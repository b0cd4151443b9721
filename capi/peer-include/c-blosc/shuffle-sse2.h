/* oxiblosc's own declarations for C-Blosc 1.21.6's internal-header tests:
   the SSE2 shuffle kernels of our libblosc.so.1 (checked at run time: a CPU
   without SSE2 gets the best kernel it has, which writes the same bytes). */
#ifndef OXIBLOSC_PEER_SHUFFLE_SSE2_H
#define OXIBLOSC_PEER_SHUFFLE_SSE2_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void blosc_internal_shuffle_sse2(const size_t bytesoftype, const size_t blocksize,
                                 const uint8_t* const _src, uint8_t* const _dest);
void blosc_internal_unshuffle_sse2(const size_t bytesoftype, const size_t blocksize,
                                   const uint8_t* const _src, uint8_t* const _dest);

#ifdef __cplusplus
}
#endif

#endif
