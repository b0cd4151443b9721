/*
  oxiblosc's stand-in for C-Blosc2's generated "config.h": the optional
  codecs oxiblosc's libblosc2.so is built with (see ../README.md).
*/

#ifndef OXIBLOSC_PEER_CONFIG_H
#define OXIBLOSC_PEER_CONFIG_H

/* zlib (BLOSC_ZLIB) and Zstandard (BLOSC_ZSTD, with dictionaries) are
   built in. */
#define HAVE_ZLIB 1
#define HAVE_ZSTD 1

#endif /* OXIBLOSC_PEER_CONFIG_H */
