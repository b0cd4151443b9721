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
use oxiblosc::frame::{MsgpackValue, decode_msgpack, encode_msgpack};

/// The vlmetalayer holding the digests.
pub const VLMETA_NAME: &str = "oxiblosc.checksums";

/// The digests of a frame's chunks, in chunk order.
pub struct Digests {
    pub algorithm: Checksum,
    pub digests: Vec<Vec<u8>>,
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
        let digests = self.digests.iter().cloned().map(MsgpackValue::Binary);
        encode_msgpack(&MsgpackValue::Map(vec![
            (
                "algorithm".into(),
                self.algorithm.name().to_ascii_lowercase().into(),
            ),
            ("digests".into(), MsgpackValue::Array(digests.collect())),
        ]))
    }

    /// Parse a stored value; it must hold one digest for each of the
    /// `nchunks` chunks.
    pub fn decode(v: &[u8], nchunks: usize) -> Result<Digests, String> {
        let bad = || format!("the {VLMETA_NAME} vlmetalayer is malformed");
        let value = decode_msgpack(v).map_err(|_| bad())?;
        let MsgpackValue::Map(fields) = value else {
            return Err(bad());
        };
        let field = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v)
                .ok_or_else(bad)
        };
        if fields.len() != 2 {
            return Err(bad());
        }
        let name = field("algorithm")?.as_str().ok_or_else(bad)?;
        let algorithm = Checksum::from_name(name)
            .ok_or_else(|| format!("{VLMETA_NAME}: unknown checksum {name:?}"))?;
        let list = field("digests")?.as_array().ok_or_else(bad)?;
        if list.len() != nchunks {
            return Err(format!(
                "{VLMETA_NAME} holds {} digests for {nchunks} chunks",
                list.len()
            ));
        }
        let digests = list
            .iter()
            .map(|d| match d.as_slice() {
                Some(d) if d.len() == algorithm.size() => Ok(d.to_vec()),
                _ => Err(bad()),
            })
            .collect::<Result<Vec<_>, String>>()?;
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
