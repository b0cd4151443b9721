/* oxiblosc's own declarations for C-Blosc 1.21.6's internal-header tests
   (written for our libblosc.so.1, not copied from C-Blosc).

   The byte-shuffle entry points our library exports: byte j of item i of a
   block goes to dest[j * nitems + i], trailing bytes (blocksize % typesize)
   are copied.  Each call checks its pointers (null: nothing done). */
#ifndef OXIBLOSC_PEER_SHUFFLE_H
#define OXIBLOSC_PEER_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

/* Our library picks the instruction set at run time and has SSE2 and AVX2
   kernels on x86-64 (a CPU without AVX2 gets the best kernel it has), so
   the accelerated entry points always exist there.  C-Blosc's build sets
   these from CMake; the tests test for them. */
#if defined(__x86_64__) || defined(_M_X64)
#  ifndef SHUFFLE_SSE2_ENABLED
#    define SHUFFLE_SSE2_ENABLED 1
#  endif
#  ifndef SHUFFLE_AVX2_ENABLED
#    define SHUFFLE_AVX2_ENABLED 1
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Shuffle / unshuffle with the best kernel the CPU runs. */
void blosc_internal_shuffle(const size_t bytesoftype, const size_t blocksize,
                            const uint8_t* _src, const uint8_t* _dest);
void blosc_internal_unshuffle(const size_t bytesoftype, const size_t blocksize,
                              const uint8_t* _src, const uint8_t* _dest);

#ifdef __cplusplus
}
#endif

#endif
