/*
  oxiblosc's stand-in for C-Blosc2's internal "sframe.h" (sparse frames: a
  directory with an index file and one file per chunk), for the peer
  suite's internal-header test programs (see ../README.md).
*/

#ifndef OXIBLOSC_PEER_SFRAME_H
#define OXIBLOSC_PEER_SFRAME_H

#include "frame.h"

#include <stdbool.h>
#include <stdint.h>

/* Open chunk `nchunk`'s file (named with 8 uppercase hex digits, then
   ".chunk") of the sparse frame in directory `urlpath`, in fopen `mode`,
   through the I/O callbacks `io` names (NULL: the file system). Returns the
   stream the callbacks' `open` returned, or NULL: for a chunk number
   outside 0..UINT32_MAX, bad arguments, or a file that does not open.
   Close it with the same callbacks' `close`. */
void *sframe_open_chunk(const char *urlpath, int64_t nchunk, const char *mode, const blosc2_io *io);

#endif /* OXIBLOSC_PEER_SFRAME_H */
