//! Context, thread-pool, threading and shuffle internals for the peer
//! suites' internal-header tests (`capi/peer-include/*/context.h`,
//! `threading.h`, `shuffle*.h`).
