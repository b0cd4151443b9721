/*
  oxiblosc's stand-in for C-Blosc2's internal "frame.h", for the peer
  suite's internal-header test programs (see ../README.md). Written for
  oxiblosc's libblosc2.so: the frame format's byte offsets (the Blosc2
  frame specification, README_CFRAME_FORMAT), the frame view a
  super-chunk's `frame` member points to, and the frame functions our
  library exports (capi/src/internal/frame.rs).
*/

#ifndef OXIBLOSC_PEER_FRAME_H
#define OXIBLOSC_PEER_FRAME_H

#include "blosc2.h"

#include <stdbool.h>
#include <stdint.h>

/* Frame kinds (header byte FRAME_TYPE). */
#define FRAME_CONTIGUOUS_TYPE 0
#define FRAME_DIRECTORY_TYPE 1

/* Bits of the general flags byte (FRAME_FLAGS); bits 0-3 hold the frame
   format version. */
#define FRAME_VARIABLE_CHUNKS (1U << 6)
#define FRAME_VL_BLOCKS (1U << 7)

/* Byte offsets of the fixed header's fields, counted from the frame start
   (each field follows its one-byte msgpack marker). */
#define FRAME_HEADER_MAGIC 2       /* "b2frame\0" */
#define FRAME_HEADER_LEN 11        /* int32: bytes of the header */
#define FRAME_LEN 16               /* int64: bytes of the whole frame */
#define FRAME_FLAGS 25             /* general flags */
#define FRAME_TYPE 26              /* frame kind */
#define FRAME_CODECS 27            /* codec (low nibble), clevel (high nibble) */
#define FRAME_OTHER_FLAGS 28       /* split mode */
#define FRAME_NBYTES 30            /* int64: uncompressed bytes */
#define FRAME_CBYTES 39            /* int64: bytes of the chunks */
#define FRAME_TYPESIZE 48          /* int32 */
#define FRAME_BLOCKSIZE 53         /* int32 */
#define FRAME_CHUNKSIZE 58         /* int32 */
#define FRAME_NTHREADS_C 63        /* int16 */
#define FRAME_NTHREADS_D 66        /* int16 */
#define FRAME_HAS_VLMETALAYERS 68  /* bool */
#define FRAME_FILTER_PIPELINE 70   /* number of filters, then the filter ids */
#define FRAME_UDCODEC 77           /* user codec id */
#define FRAME_CODEC_META 78        /* codec meta byte */
#define FRAME_OTHER_FLAGS2 85      /* bit 0: dictionary */
#define FRAME_USE_DICT (1U << 0)
#define FRAME_HEADER_MINLEN 87     /* the fixed header's length */
#define FRAME_METALAYERS 87        /* the metalayers section starts here */
#define FRAME_IDX_SIZE 89          /* int16: size of the metalayers index */

#define FRAME_FILTER_PIPELINE_MAX 8

/* Trailer. */
#define FRAME_TRAILER_VERSION_BETA2 (0U)
#define FRAME_TRAILER_VERSION (1U)
#define FRAME_TRAILER_MINLEN (25)       /* the smallest trailer */
#define FRAME_TRAILER_LEN_OFFSET (22)   /* uint32 trailer length, counted from the frame end */
#define FRAME_TRAILER_VLMETALAYERS (2)

/* What a frame looks like from C: a super-chunk's `frame` member (NULL for
   an in-memory super-chunk that is not contiguous) points to one, kept up
   to date by every call that changes the super-chunk; frame_from_file_offset
   returns one (free it with frame_free). */
typedef struct {
  char *urlpath;          /* file or directory; NULL for a frame in memory */
  int64_t len;            /* bytes of the whole frame (for a sparse frame, of its index) */
  int64_t file_offset;    /* where the frame starts in its file */
  uint32_t trailer_len;   /* bytes of the trailer */
  bool sframe;            /* a sparse frame (a directory) */
  blosc2_schunk *schunk;  /* the super-chunk this frame belongs to; NULL if none */
} blosc2_frame_s;

/* The frame stored in file `urlpath` from byte `offset` on, read through
   the I/O callbacks `io` names (NULL: the file system); NULL when it is not
   a valid frame (bad magic, header, index or trailer). */
blosc2_frame_s *frame_from_file_offset(const char *urlpath, const blosc2_io *io, int64_t offset);

/* Free a frame returned by frame_from_file_offset (NULL is fine); 0. */
int frame_free(blosc2_frame_s *frame);

#endif /* OXIBLOSC_PEER_FRAME_H */
