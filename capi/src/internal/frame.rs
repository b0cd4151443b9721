//! Frame, sparse-frame and chunk internals for the peer suites'
//! internal-header tests (`capi/peer-include/c-blosc2/frame.h`,
//! `blosc-private.h`, `sframe.h`, `config.h`).
