//! The one error type of the crate.

/// Everything that can go wrong, with a message that says what and where.
///
/// Bad input never panics: a malformed chunk, a destination too small or a
/// parameter out of range all come back as one of these.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes end before a structure they declare is complete.
    #[error("truncated input: {what} needs {needed} bytes, only {available} available")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// A header field holds a value no valid chunk or frame has.
    #[error("invalid header: {0}")]
    InvalidHeader(String),
    /// The compressed data is inconsistent with its header.
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// The destination buffer cannot hold the result.
    #[error("destination too small: {needed} bytes needed, {available} available")]
    DstTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// A compression or decompression parameter is out of range.
    #[error("invalid parameter: {0}")]
    InvalidParam(String),
    /// The data uses a codec, filter or feature this build cannot handle.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A codec library reported an error.
    #[error("{codec} codec error: {message}")]
    Codec {
        /// The codec's name.
        codec: &'static str,
        /// What the codec said.
        message: String,
    },
    /// An error from the byte-transform kernels.
    #[error(transparent)]
    Kernel(#[from] oxiblosc_kernels::Error),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Io(e) => e,
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, other),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn corrupt(msg: impl Into<String>) -> Error {
    Error::Corrupt(msg.into())
}

pub(crate) fn invalid_header(msg: impl Into<String>) -> Error {
    Error::InvalidHeader(msg.into())
}

pub(crate) fn invalid_param(msg: impl Into<String>) -> Error {
    Error::InvalidParam(msg.into())
}
