//! The C-Blosc2 ABI (to come).
