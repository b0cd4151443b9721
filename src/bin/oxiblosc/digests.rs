//! Per-chunk checksums of a frame, kept in the vlmetalayer
//! [`VLMETA_NAME`] (beyond C-Blosc2, which ignores it and still reads the
//! frame): a digest of each chunk's *decompressed* bytes, so silent
//! corruption anywhere between the writer and the reader (stored bytes,
//! codec) is caught by `decompress` and `verify`.
//!
//! The value is msgpack, as python-blosc2 stores vlmetalayer values:
//! `{"algorithm": NAME, "digests": [bin, ...]}` (a map of two; NAME one of
//! the Bloscpack checksum names; one bin per chunk).

use oxiblosc::bloscpack::Checksum;

/// The vlmetalayer holding the digests.
pub const VLMETA_NAME: &str = "oxiblosc.checksums";

/// The digests of a frame's chunks, in chunk order.
pub struct Digests {
    pub algorithm: Checksum,
    pub digests: Vec<Vec<u8>>,
}

fn push_str(out: &mut Vec<u8>, s: &str) {
    assert!(s.len() < 32, "fixstr");
    out.push(0xa0 | s.len() as u8);
    out.extend_from_slice(s.as_bytes());
}

impl Digests {
    pub fn new(algorithm: Checksum) -> Digests {
        Digests {
            algorithm,
            digests: Vec::new(),
        }
    }

    /// Add the digest of the next chunk's data.
    pub fn add(&mut self, data: &[u8]) {
        self.digests.push(self.algorithm.digest(data));
    }

    /// The msgpack value stored in the vlmetalayer.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0x82];
        push_str(&mut out, "algorithm");
        push_str(&mut out, &self.algorithm.name().to_ascii_lowercase());
        push_str(&mut out, "digests");
        let n = self.digests.len();
        out.push(0xdd);
        out.extend_from_slice(&(n as u32).to_be_bytes());
        for d in &self.digests {
            out.push(0xc4);
            out.push(d.len() as u8);
            out.extend_from_slice(d);
        }
        out
    }

    /// Parse a stored value; `nchunks` bounds what is believed before
    /// anything is allocated.
    pub fn decode(v: &[u8], nchunks: usize) -> Result<Digests, String> {
        let bad = || format!("the {VLMETA_NAME} vlmetalayer is malformed");
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8], String> {
            let s = v.get(at..at + n).ok_or_else(bad)?;
            at += n;
            Ok(s)
        };
        let fixstr = |b: &[u8]| -> Option<usize> {
            (b[0] & 0xe0 == 0xa0).then_some(usize::from(b[0] & 0x1f))
        };
        if take(1)? != [0x82] {
            return Err(bad());
        }
        let n = fixstr(take(1)?).ok_or_else(bad)?;
        if take(n)? != b"algorithm" {
            return Err(bad());
        }
        let n = fixstr(take(1)?).ok_or_else(bad)?;
        let name = String::from_utf8_lossy(take(n)?).into_owned();
        let algorithm = Checksum::from_name(&name)
            .ok_or_else(|| format!("{VLMETA_NAME}: unknown checksum {name:?}"))?;
        let n = fixstr(take(1)?).ok_or_else(bad)?;
        if take(n)? != b"digests" {
            return Err(bad());
        }
        if take(1)? != [0xdd] {
            return Err(bad());
        }
        let count = u32::from_be_bytes(take(4)?.try_into().unwrap()) as usize;
        if count != nchunks {
            return Err(format!(
                "{VLMETA_NAME} holds {count} digests for {nchunks} chunks"
            ));
        }
        let mut digests = Vec::with_capacity(count);
        for _ in 0..count {
            if take(1)? != [0xc4] {
                return Err(bad());
            }
            let len = usize::from(take(1)?[0]);
            if len != algorithm.size() {
                return Err(bad());
            }
            digests.push(take(len)?.to_vec());
        }
        Ok(Digests { algorithm, digests })
    }

    /// Check chunk `i`'s decompressed `data`.
    pub fn check(&self, i: usize, data: &[u8]) -> Result<(), String> {
        if self.algorithm.verify(data, &self.digests[i]) {
            Ok(())
        } else {
            Err(format!(
                "chunk {i}: {} checksum mismatch: the data is corrupt",
                self.algorithm.name().to_ascii_lowercase()
            ))
        }
    }
}
