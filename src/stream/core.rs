//! What the chunk-sequence and frame streams share: the encoder core (cuts
//! the input into chunks of a fixed size and compresses them), the decoder
//! core (decompresses the chunks a source yields), and the bounded
//! pipelines that overlap reading, (de)compressing and writing.

use std::io::{self, Read, Write};
use std::thread;

use crossbeam_channel::bounded;

use super::IN_FLIGHT;
use crate::error::invalid_param;
use crate::{CParams, Compressor, DParams, Decompressor, MAX_BUFFERSIZE, max_compressed_len};

/// What a format does with each compressed chunk, in order.
pub(crate) trait Framing {
    /// Take one compressed chunk that holds `nbytes` input bytes.
    fn put(&mut self, chunk: &[u8], nbytes: usize) -> io::Result<()>;
}

/// Where a decoder's compressed chunks come from, in order.
pub(crate) trait Source {
    /// Read the next compressed chunk into `buf` (cleared first). `false`
    /// at the end of the stream, once every end-of-stream check passed.
    fn next_chunk(&mut self, buf: &mut Vec<u8>) -> io::Result<bool>;
}

fn broken() -> io::Error {
    io::Error::other("the stream failed earlier and is incomplete")
}

fn panicked(what: &str) -> io::Error {
    io::Error::other(format!("the stream's {what} thread panicked"))
}

/// The chunk size rounded down to whole items (at least one item), checked.
pub(crate) fn check_chunksize(params: &CParams, chunksize: usize) -> crate::Result<usize> {
    params.validate()?;
    if chunksize == 0 || chunksize > MAX_BUFFERSIZE {
        return Err(invalid_param(format!(
            "chunksize {chunksize} is not in 1..={MAX_BUFFERSIZE}"
        )));
    }
    let ts = params.typesize.max(1);
    Ok(if chunksize >= ts {
        chunksize / ts * ts
    } else {
        chunksize
    })
}

/// Cuts a byte stream into chunks of `chunksize` bytes (the last one may be
/// shorter), compresses them and hands them to its framing.
pub(crate) struct EncoderCore<F> {
    pub(crate) framing: F,
    compressor: Compressor,
    chunksize: usize,
    pending: Vec<u8>,
    out: Vec<u8>,
    /// Chunks handed to the framing.
    pub(crate) nchunks: u64,
    broken: bool,
}

impl<F: Framing> EncoderCore<F> {
    pub(crate) fn new(framing: F, params: CParams, chunksize: usize) -> EncoderCore<F> {
        EncoderCore {
            framing,
            compressor: Compressor::new(params),
            chunksize,
            pending: Vec::new(),
            out: Vec::new(),
            nchunks: 0,
            broken: false,
        }
    }

    pub(crate) fn chunksize(&self) -> usize {
        self.chunksize
    }

    pub(crate) fn params(&self) -> &CParams {
        self.compressor.params()
    }

    fn check(&self) -> io::Result<()> {
        if self.broken { Err(broken()) } else { Ok(()) }
    }

    /// Compress `data` (one whole chunk) and hand it on.
    fn emit(
        compressor: &mut Compressor,
        out: &mut Vec<u8>,
        framing: &mut F,
        data: &[u8],
    ) -> io::Result<()> {
        let need = max_compressed_len(data.len());
        if out.len() < need {
            out.resize(need, 0);
        }
        let n = compressor.compress_into(data, out)?;
        framing.put(&out[..n], data.len())
    }

    pub(crate) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.check()?;
        let cs = self.chunksize;
        let (n, r) = if self.pending.is_empty() && buf.len() >= cs {
            // A whole chunk straight from the caller's slice.
            let r = Self::emit(
                &mut self.compressor,
                &mut self.out,
                &mut self.framing,
                &buf[..cs],
            );
            (cs, r.map(|()| true))
        } else {
            let n = (cs - self.pending.len()).min(buf.len());
            self.pending.extend_from_slice(&buf[..n]);
            if self.pending.len() == cs {
                let r = Self::emit(
                    &mut self.compressor,
                    &mut self.out,
                    &mut self.framing,
                    &self.pending,
                );
                self.pending.clear();
                (n, r.map(|()| true))
            } else {
                (n, Ok(false))
            }
        };
        match r {
            Ok(emitted) => {
                self.nchunks += u64::from(emitted);
                Ok(n)
            }
            Err(e) => {
                self.broken = true;
                Err(e)
            }
        }
    }

    /// Compress what is pending (a short last chunk); with `at_least_one`,
    /// an empty chunk when no chunk was written at all.
    pub(crate) fn finish_chunks(&mut self, at_least_one: bool) -> io::Result<()> {
        self.check()?;
        if !self.pending.is_empty() || (at_least_one && self.nchunks == 0) {
            let r = Self::emit(
                &mut self.compressor,
                &mut self.out,
                &mut self.framing,
                &self.pending,
            );
            if let Err(e) = r {
                self.broken = true;
                return Err(e);
            }
            self.pending.clear();
            self.nchunks += 1;
        }
        Ok(())
    }
}

impl<F: Framing + Send> EncoderCore<F> {
    /// Read `r` to its end through the pipeline (reader thread → the
    /// compressor here → writer thread); a short last piece stays pending
    /// (as after [`EncoderCore::write`]). Returns the bytes read.
    pub(crate) fn copy_from<R: Read + Send>(&mut self, mut r: R) -> io::Result<u64> {
        self.check()?;
        let cs = self.chunksize;
        let (full_tx, full_rx) = bounded::<Vec<u8>>(IN_FLIGHT);
        let (free_tx, free_rx) = bounded::<Vec<u8>>(IN_FLIGHT + 2);
        let (comp_tx, comp_rx) = bounded::<(Vec<u8>, usize, usize)>(IN_FLIGHT);
        let (cfree_tx, cfree_rx) = bounded::<Vec<u8>>(IN_FLIGHT + 2);
        for _ in 0..=IN_FLIGHT {
            let _ = free_tx.send(Vec::new());
        }
        for _ in 0..IN_FLIGHT + 2 {
            let _ = cfree_tx.send(Vec::new());
        }
        let pending = std::mem::take(&mut self.pending);
        let compressor = &mut self.compressor;
        let framing = &mut self.framing;
        let (result, rest, chunks) = thread::scope(|s| {
            let reader = s.spawn(move || -> io::Result<(Vec<u8>, u64)> {
                let mut total = 0u64;
                let mut have = pending.len();
                let mut buf = pending;
                loop {
                    // Buffers keep their length: read straight into the
                    // initialised bytes (no zeroing per chunk).
                    if buf.len() < cs {
                        buf.resize(cs, 0);
                    }
                    while have < cs {
                        match r.read(&mut buf[have..cs]) {
                            Ok(0) => break,
                            Ok(n) => {
                                have += n;
                                total += n as u64;
                            }
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e),
                        }
                    }
                    if have < cs {
                        buf.truncate(have);
                        return Ok((buf, total));
                    }
                    if full_tx.send(buf).is_err() {
                        return Ok((Vec::new(), total));
                    }
                    buf = match free_rx.recv() {
                        Ok(b) => b,
                        Err(_) => return Ok((Vec::new(), total)),
                    };
                    have = 0;
                }
            });
            let writer = s.spawn(move || -> io::Result<u64> {
                let mut chunks = 0u64;
                for (c, n, nbytes) in comp_rx.iter() {
                    framing.put(&c[..n], nbytes)?;
                    chunks += 1;
                    let _ = cfree_tx.send(c);
                }
                Ok(chunks)
            });
            let mut main_err = None;
            for buf in full_rx.iter() {
                let Ok(mut c) = cfree_rx.recv() else { break };
                let need = max_compressed_len(buf.len());
                if c.len() < need {
                    c.resize(need, 0);
                }
                match compressor.compress_into(&buf, &mut c) {
                    Ok(n) => {
                        let len = buf.len();
                        let _ = free_tx.send(buf);
                        if comp_tx.send((c, n, len)).is_err() {
                            break;
                        }
                    }
                    Err(e) => {
                        main_err = Some(io::Error::from(e));
                        break;
                    }
                }
            }
            drop((full_rx, comp_tx, free_tx));
            let w = writer.join().unwrap_or_else(|_| Err(panicked("writer")));
            let r = reader.join().unwrap_or_else(|_| Err(panicked("reader")));
            match (w, main_err, r) {
                (Err(e), _, _) | (Ok(_), Some(e), _) | (Ok(_), None, Err(e)) => (Err(e), None, 0),
                (Ok(chunks), None, Ok((rest, total))) => (Ok(total), Some(rest), chunks),
            }
        });
        self.nchunks += chunks;
        match rest {
            Some(rest) => self.pending = rest,
            None => self.broken = true,
        }
        result
    }
}

/// Decompresses the chunks a [`Source`] yields, in order.
pub(crate) struct DecoderCore<S> {
    pub(crate) source: S,
    d: Decompressor,
    cbuf: Vec<u8>,
    out: Vec<u8>,
    pos: usize,
    /// Chunks decoded so far (the index of the next one).
    decoded: u64,
    done: bool,
    broken: bool,
}

/// A chunk of a stream that failed to decode: which one (from 0, in stream
/// order) and why; the `io::Error` around it keeps the cause's kind.
#[derive(Debug)]
struct ChunkFailed {
    index: u64,
    cause: crate::Error,
}

impl std::fmt::Display for ChunkFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "chunk {}: {}", self.index, self.cause)
    }
}

impl std::error::Error for ChunkFailed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

/// Decompress chunk `index` of the stream (whole) into `out` (resized to
/// its size). The chunk is checked whole before `out` is sized by its
/// header; an error names the chunk.
fn decode(d: &mut Decompressor, index: u64, chunk: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
    let mut run = |out: &mut Vec<u8>| -> crate::Result<()> {
        let h = crate::chunk::validate(chunk)?;
        // The output limit before the buffer is sized (a special chunk
        // validates at any size).
        d.params().check_output(h.nbytes)?;
        out.resize(h.nbytes, 0);
        let n = d.decompress_into(chunk, out)?;
        out.truncate(n);
        Ok(())
    };
    run(out).map_err(|cause| {
        let kind = match &cause {
            crate::Error::Io(e) => e.kind(),
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, ChunkFailed { index, cause })
    })
}

impl<S: Source> DecoderCore<S> {
    pub(crate) fn new(source: S, params: DParams) -> DecoderCore<S> {
        DecoderCore {
            source,
            d: Decompressor::new(params),
            cbuf: Vec::new(),
            out: Vec::new(),
            pos: 0,
            decoded: 0,
            done: false,
            broken: false,
        }
    }

    fn fail<T>(&mut self, e: io::Error) -> io::Result<T> {
        self.broken = true;
        Err(e)
    }

    pub(crate) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.broken {
            return Err(broken());
        }
        while self.pos == self.out.len() {
            if self.done || buf.is_empty() {
                return Ok(0);
            }
            match self.source.next_chunk(&mut self.cbuf) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    return Ok(0);
                }
                Err(e) => return self.fail(e),
            }
            if let Err(e) = decode(&mut self.d, self.decoded, &self.cbuf, &mut self.out) {
                return self.fail(e);
            }
            self.decoded += 1;
            self.pos = 0;
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl<S: Source + Send> DecoderCore<S> {
    /// Decompress everything left into `w` through the pipeline (reader
    /// thread → the decompressor here → writer thread); returns the bytes
    /// written.
    pub(crate) fn copy_to<W: Write + Send>(&mut self, mut w: W) -> io::Result<u64> {
        if self.broken {
            return Err(broken());
        }
        let mut total = (self.out.len() - self.pos) as u64;
        if let Err(e) = w.write_all(&self.out[self.pos..]) {
            return self.fail(e);
        }
        self.pos = self.out.len();
        if self.done {
            w.flush()?;
            return Ok(total);
        }
        let (full_tx, full_rx) = bounded::<Vec<u8>>(IN_FLIGHT);
        let (free_tx, free_rx) = bounded::<Vec<u8>>(IN_FLIGHT + 2);
        let (out_tx, out_rx) = bounded::<Vec<u8>>(IN_FLIGHT);
        let (ofree_tx, ofree_rx) = bounded::<Vec<u8>>(IN_FLIGHT + 2);
        for _ in 0..IN_FLIGHT + 2 {
            let _ = free_tx.send(Vec::new());
            let _ = ofree_tx.send(Vec::new());
        }
        let source = &mut self.source;
        let d = &mut self.d;
        let decoded = &mut self.decoded;
        let result = thread::scope(|s| {
            let reader = s.spawn(move || -> io::Result<()> {
                while let Ok(mut buf) = free_rx.recv() {
                    if !source.next_chunk(&mut buf)? {
                        return Ok(());
                    }
                    if full_tx.send(buf).is_err() {
                        return Ok(());
                    }
                }
                Ok(())
            });
            let writer = s.spawn(move || -> io::Result<u64> {
                let mut n = 0u64;
                for o in out_rx.iter() {
                    w.write_all(&o)?;
                    n += o.len() as u64;
                    let _ = ofree_tx.send(o);
                }
                w.flush()?;
                Ok(n)
            });
            let mut main_err = None;
            for c in full_rx.iter() {
                let Ok(mut o) = ofree_rx.recv() else { break };
                if let Err(e) = decode(d, *decoded, &c, &mut o) {
                    main_err = Some(e);
                    break;
                }
                *decoded += 1;
                let _ = free_tx.send(c);
                if out_tx.send(o).is_err() {
                    break;
                }
            }
            drop((full_rx, out_tx, free_tx));
            let w = writer.join().unwrap_or_else(|_| Err(panicked("writer")));
            let r = reader.join().unwrap_or_else(|_| Err(panicked("reader")));
            match (w, main_err, r) {
                (Err(e), _, _) | (Ok(_), Some(e), _) | (Ok(_), None, Err(e)) => Err(e),
                (Ok(n), None, Ok(())) => Ok(n),
            }
        });
        match result {
            Ok(n) => {
                self.done = true;
                total += n;
                Ok(total)
            }
            Err(e) => self.fail(e),
        }
    }
}

impl<F: std::fmt::Debug> std::fmt::Debug for EncoderCore<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Encoder")
            .field("framing", &self.framing)
            .field("params", self.compressor.params())
            .field("chunksize", &self.chunksize)
            .field("pending", &self.pending.len())
            .field("nchunks", &self.nchunks)
            .finish_non_exhaustive()
    }
}

impl<S: std::fmt::Debug> std::fmt::Debug for DecoderCore<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoder")
            .field("source", &self.source)
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}
