//! The `b2nd` metalayer (and the older `caterva` one): encode and decode.
//!
//! Layout (`README_B2ND_METALAYER.rst` of C-Blosc2), all msgpack:
//! `[version, ndim, [shape: int64 × ndim], [chunkshape: int32 × ndim],
//! [blockshape: int32 × ndim], dtype_format, dtype: str32]`. A `caterva`
//! metalayer is the same array without its last two entries.

use crate::error::{Error, Result};

/// The name of the metalayer C-Blosc2 and python-blosc2 write.
pub const B2ND_META: &str = "b2nd";
/// The name the metalayer had before C-Blosc2 took Caterva in (read only).
pub const CATERVA_META: &str = "caterva";
/// The metalayer version written (`B2ND_METALAYER_VERSION`).
pub const META_VERSION: u8 = 0;
/// The most dimensions an array has (`B2ND_MAX_DIM` of C-Blosc2 3.x).
pub const MAX_DIM: usize = 16;
/// The dtype C-Blosc2 assumes when a metalayer has none (`B2ND_DEFAULT_DTYPE`).
pub const DEFAULT_DTYPE: &str = "|u1";
/// The longest dtype string accepted (a structured dtype's description is a
/// Python literal; 64 KiB is far beyond any real one).
pub const MAX_DTYPE_LEN: usize = 1 << 16;

/// The geometry and type of an NDArray, as its metalayer records them.
///
/// Shapes are in items: `shape` the logical array, `chunkshape` one chunk
/// of the super-chunk, `blockshape` one block of a chunk. An array with a
/// zero in `shape` is empty (its chunk and block shapes may then be 0); a
/// 0-dimensional array (`ndim` 0) holds one item.
///
/// ```
/// use oxiblosc::ndarray::NdMeta;
/// let m = NdMeta::new(&[6, 10], &[4, 5], &[2, 5], "<f8");
/// let bytes = m.encode().unwrap();
/// assert_eq!(bytes.len(), 53);
/// assert_eq!(NdMeta::decode(&bytes).unwrap(), m);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NdMeta {
    /// The array's shape.
    pub shape: Vec<u64>,
    /// The shape of one chunk (each ≤ `i32::MAX`).
    pub chunkshape: Vec<u64>,
    /// The shape of one block inside a chunk (each ≤ `i32::MAX`).
    pub blockshape: Vec<u64>,
    /// The NumPy dtype string, e.g. `<f4`, `|u1`, `>i8` (a structured dtype
    /// is its Python description, e.g. `[('a', '<i4'), ('b', '<f8')]`).
    pub dtype: String,
    /// The dtype's notation: 0 is NumPy's (the only one C-Blosc2 defines).
    pub dtype_format: u8,
    /// The metalayer's format version (0).
    pub version: u8,
    /// Whether the metalayer had a dtype at all (`caterva` ones have none;
    /// `dtype` then holds a default, see [`NdMeta::decode`]).
    pub has_dtype: bool,
}

impl NdMeta {
    /// A metalayer for a NumPy dtype (version 0, dtype format 0).
    pub fn new(shape: &[u64], chunkshape: &[u64], blockshape: &[u64], dtype: &str) -> NdMeta {
        NdMeta {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            dtype: dtype.to_string(),
            dtype_format: 0,
            version: META_VERSION,
            has_dtype: true,
        }
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Items in the array (`None` on overflow).
    pub fn nitems(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// The metalayer's bytes, as C-Blosc2's `b2nd_serialize_meta` writes
    /// them (fixed-width integers: the metalayer can be rewritten in place).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when the three shapes differ in length, there
    /// are more than [`MAX_DIM`] dimensions, a value is out of its range
    /// (shape ≤ `i64::MAX`, chunk and block shapes ≤ `i32::MAX`) or the
    /// dtype is longer than [`MAX_DTYPE_LEN`] or holds a NUL byte.
    pub fn encode(&self) -> Result<Vec<u8>> {
        let n = self.ndim();
        if self.chunkshape.len() != n || self.blockshape.len() != n {
            return Err(Error::InvalidParam(format!(
                "shape, chunkshape and blockshape have {}, {} and {} dimensions",
                n,
                self.chunkshape.len(),
                self.blockshape.len()
            )));
        }
        if n > MAX_DIM {
            return Err(Error::InvalidParam(format!(
                "{n} dimensions; an NDArray has at most {MAX_DIM}"
            )));
        }
        if self.version > 0x7f || self.dtype_format > 0x7f {
            return Err(Error::InvalidParam(
                "version and dtype format are 7-bit numbers".into(),
            ));
        }
        if self.dtype.len() > MAX_DTYPE_LEN {
            return Err(Error::InvalidParam(format!(
                "a {}-byte dtype string",
                self.dtype.len()
            )));
        }
        if self.dtype.contains('\0') {
            return Err(Error::InvalidParam(format!(
                "dtype {:?} holds a NUL byte (C reads it only up to there)",
                self.dtype
            )));
        }
        let mut out = Vec::with_capacity(3 + 3 * (1 + 9 * n) + 6 + self.dtype.len());
        out.extend([0x97, self.version, n as u8, 0x90 + n as u8]);
        for &d in &self.shape {
            let v = i64::try_from(d)
                .map_err(|_| Error::InvalidParam(format!("shape {d} over i64::MAX")))?;
            out.push(0xd3);
            out.extend(v.to_be_bytes());
        }
        for (what, dims) in [
            ("chunkshape", &self.chunkshape),
            ("blockshape", &self.blockshape),
        ] {
            out.push(0x90 + n as u8);
            for &d in dims {
                let v = i32::try_from(d)
                    .map_err(|_| Error::InvalidParam(format!("{what} {d} over i32::MAX")))?;
                out.push(0xd2);
                out.extend(v.to_be_bytes());
            }
        }
        out.push(self.dtype_format);
        out.push(0xdb);
        out.extend((self.dtype.len() as u32).to_be_bytes());
        out.extend(self.dtype.as_bytes());
        Ok(out)
    }

    /// [`NdMeta::encode`], made `len` bytes long by NULs at the end of its
    /// dtype when it is shorter: what rewrites a stored metalayer of `len`
    /// bytes in place (a metalayer keeps its length, as in C-Blosc2, and
    /// the old bytes past a shorter one would remain). C-Blosc2 and
    /// [`NdMeta::decode`] read the dtype up to its first NUL.
    pub(crate) fn encode_padded(&self, len: usize) -> Result<Vec<u8>> {
        let mut raw = self.encode()?;
        if raw.len() < len {
            // The dtype's str32 length sits just before its bytes, at the end.
            let at = raw.len() - self.dtype.len() - 4;
            let padded = self.dtype.len() + (len - raw.len());
            raw[at..at + 4].copy_from_slice(&(padded as u32).to_be_bytes());
            raw.resize(len, 0);
        }
        Ok(raw)
    }

    /// Read a `b2nd` metalayer, or a `caterva` one (five entries, no
    /// dtype: `dtype` is then [`DEFAULT_DTYPE`] and `has_dtype` false; see
    /// [`NdMeta::default_dtype`] for one fitting the item size).
    ///
    /// Any msgpack integer encoding is accepted, but every value is
    /// checked: `ndim` ≤ [`MAX_DIM`], each shape list exactly `ndim` long,
    /// shape entries in `0..=i64::MAX`, chunk and block shapes in
    /// `0..=i32::MAX`, a zero chunk or block dimension only where the
    /// array's dimension is zero (a block may be longer than its chunk, as
    /// C-Blosc2 allows: the chunk is then one block, padded), a
    /// UTF-8 dtype of at most [`MAX_DTYPE_LEN`] bytes (read, as C reads it,
    /// up to its first NUL; it may be empty), nothing after the value.
    ///
    /// # Errors
    /// [`Error::Corrupt`] for anything else.
    pub fn decode(bytes: &[u8]) -> Result<NdMeta> {
        let bad = |why: String| Error::Corrupt(format!("b2nd metalayer: {why}"));
        let fixed = sixteen_dims_as_c_writes_them(bytes);
        let mut rd = fixed.as_deref().unwrap_or(bytes);
        let v = rmpv::decode::read_value(&mut rd).map_err(|e| bad(format!("not msgpack ({e})")))?;
        if !rd.is_empty() {
            return Err(bad(format!("{} bytes after its value", rd.len())));
        }
        let items = v
            .as_array()
            .ok_or_else(|| bad("not a msgpack array".into()))?;
        if items.len() != 7 && items.len() != 5 {
            return Err(bad(format!(
                "an array of {} entries (7, or 5 in a caterva one)",
                items.len()
            )));
        }
        let small = |v: &rmpv::Value, what: &str| -> Result<u8> {
            v.as_u64()
                .filter(|&x| x <= 0x7f)
                .map(|x| x as u8)
                .ok_or_else(|| bad(format!("{what} {v} is not a 7-bit number")))
        };
        let version = small(&items[0], "version")?;
        let ndim = small(&items[1], "ndim")? as usize;
        if ndim > MAX_DIM {
            return Err(bad(format!("ndim {ndim}; at most {MAX_DIM}")));
        }
        let dims = |v: &rmpv::Value, what: &str, max: u64| -> Result<Vec<u64>> {
            let a = v
                .as_array()
                .ok_or_else(|| bad(format!("{what} is not an array")))?;
            if a.len() != ndim {
                return Err(bad(format!(
                    "{what} has {} entries, ndim is {ndim}",
                    a.len()
                )));
            }
            a.iter()
                .map(|x| {
                    x.as_u64()
                        .filter(|&d| d <= max)
                        .ok_or_else(|| bad(format!("{what} entry {x} is not in 0..={max}")))
                })
                .collect()
        };
        let shape = dims(&items[2], "shape", i64::MAX as u64)?;
        let chunkshape = dims(&items[3], "chunkshape", i32::MAX as u64)?;
        let blockshape = dims(&items[4], "blockshape", i32::MAX as u64)?;
        for d in 0..ndim {
            let (s, c, b) = (shape[d], chunkshape[d], blockshape[d]);
            if s != 0 && (c == 0 || b == 0) {
                return Err(bad(format!(
                    "dimension {d}: shape {s} with chunkshape {c} and blockshape {b}"
                )));
            }
        }
        let (dtype_format, dtype, has_dtype) = if items.len() == 7 {
            let f = small(&items[5], "dtype format")?;
            let s = match &items[6] {
                rmpv::Value::String(s) => {
                    s.as_str().ok_or_else(|| bad("dtype is not UTF-8".into()))?
                }
                other => return Err(bad(format!("dtype {other} is not a string"))),
            };
            // A C string to C-Blosc2: it ends at its first NUL (and may be
            // empty, as C's `b2nd_create_ctx` takes `""`). NULs may pad it
            // (see `encode_padded`).
            let s = s.split('\0').next().unwrap_or_default();
            if s.len() > MAX_DTYPE_LEN {
                return Err(bad(format!("a {}-byte dtype", s.len())));
            }
            (f, s.to_string(), true)
        } else {
            (0, DEFAULT_DTYPE.to_string(), false)
        };
        Ok(NdMeta {
            shape,
            chunkshape,
            blockshape,
            dtype,
            dtype_format,
            version,
            has_dtype,
        })
    }

    /// The dtype to assume for items of `itemsize` bytes when a metalayer
    /// has none: `|u1` for bytes, else raw `|V<itemsize>`.
    pub fn default_dtype(itemsize: usize) -> String {
        if itemsize == 1 {
            DEFAULT_DTYPE.to_string()
        } else {
            format!("|V{itemsize}")
        }
    }
}

/// A metalayer of 16 dimensions as C-Blosc2 (3.3.5) writes it, and
/// [`NdMeta::encode`] after it: each of the three shape lists is marked
/// `0x90 + 16`, which is not a msgpack array of 16 (a fixarray holds at
/// most 15) but the empty string `0xa0`; C's reader walks it by position.
/// The same bytes with array16 markers (`0xdc 0x00 0x10`), for the msgpack
/// reader; `None` for any other metalayer (read as it is).
fn sixteen_dims_as_c_writes_them(bytes: &[u8]) -> Option<Vec<u8>> {
    let (&[head, _, 16], rest) = bytes.split_first_chunk::<3>()? else {
        return None;
    };
    if head != 0x97 && head != 0x95 {
        return None;
    }
    let mut out = bytes[..3].to_vec();
    let mut rd = rest;
    for _ in 0..3 {
        rd = rd.strip_prefix(&[0xa0])?;
        out.extend([0xdc, 0x00, 0x10]);
        for _ in 0..16 {
            let before = rd;
            rmpv::decode::read_value(&mut rd).ok()?;
            out.extend_from_slice(&before[..before.len() - rd.len()]);
        }
    }
    out.extend_from_slice(rd);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // The 6×10 float64 example of CONTAINER-NOTES §9 (chunks 4×5, blocks 2×5).
    const EXAMPLE: &str = "970002\
        92d30000000000000006d3000000000000000a\
        92d200000004d200000005\
        92d200000002d200000005\
        00db000000033c6638";

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn sixteen_dimensions_decode_as_c_blosc2_writes_them() {
        // python-blosc2 4.14.1 (C-Blosc2 3.3.5), `blosc2.zeros` of 16
        // dimensions: its b2nd metalayer starts 97 00 10 a0 d3 (the shape
        // list marked 0xa0, as encode writes it).
        let shape = [2u64, 3, 1, 1, 1, 1, 8, 1, 2, 2, 1, 1, 1, 1, 1, 2];
        let chunks = [1u64, 2, 1, 1, 1, 2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1];
        let m = NdMeta::new(&shape, &chunks, &[1; 16], "|u1");
        let raw = m.encode().unwrap();
        assert_eq!(raw[..5], [0x97, 0x00, 0x10, 0xa0, 0xd3]);
        assert_eq!(NdMeta::decode(&raw).unwrap(), m);
        // 15 dimensions are a real fixarray, read as they are.
        let m15 = NdMeta::new(&shape[..15], &chunks[..15], &[1; 15], "|u1");
        let raw15 = m15.encode().unwrap();
        assert_eq!(raw15[3], 0x9f);
        assert_eq!(NdMeta::decode(&raw15).unwrap(), m15);
        // Cut anywhere, it is still refused.
        for n in 0..raw.len() {
            assert!(NdMeta::decode(&raw[..n]).is_err(), "{n} bytes");
        }
    }

    #[test]
    fn encodes_and_decodes_the_documented_example() {
        let m = NdMeta::new(&[6, 10], &[4, 5], &[2, 5], "<f8");
        assert_eq!(m.encode().unwrap(), unhex(EXAMPLE));
        assert_eq!(NdMeta::decode(&unhex(EXAMPLE)).unwrap(), m);
    }

    /// C-Blosc2 reads a dtype as a C string: it ends at its first NUL, and
    /// may be empty (`b2nd_create_ctx` takes `""`). `decode` took
    /// `"\0\0\0"` whole, so C's `b2nd_deserialize_meta` gave `""`, which
    /// `b2nd_serialize_meta` wrote as a metalayer `decode` refused (fuzz
    /// target `capi_frame`). `encode` refuses a dtype holding a NUL: it
    /// would not read back.
    #[test]
    fn a_dtype_ends_at_its_first_nul_and_may_be_empty() {
        let good = unhex(EXAMPLE);
        let with = |dtype: &[u8]| {
            let mut raw = good[..good.len() - 8].to_vec();
            raw.push(0xdb);
            raw.extend((dtype.len() as u32).to_be_bytes());
            raw.extend(dtype);
            raw
        };
        for (stored, read) in [(&b"<f8\0xy"[..], "<f8"), (b"\0\0\0", ""), (b"", "")] {
            let m = NdMeta::decode(&with(stored)).unwrap();
            assert_eq!((m.dtype.as_str(), m.has_dtype), (read, true), "{stored:?}");
            assert_eq!(NdMeta::decode(&m.encode().unwrap()).unwrap(), m);
        }
        let nul = NdMeta::new(&[6, 10], &[4, 5], &[2, 5], "<f8\0x");
        assert!(matches!(nul.encode(), Err(Error::InvalidParam(_))));
    }

    #[test]
    fn caterva_layout_has_no_dtype() {
        // [0, 1, [10], [5], [5]] with compact msgpack integers.
        let m = NdMeta::decode(&[0x95, 0, 1, 0x91, 10, 0x91, 5, 0x91, 5]).unwrap();
        assert_eq!(m.shape, [10]);
        assert!(!m.has_dtype);
        assert_eq!(m.dtype, "|u1");
        assert_eq!(NdMeta::default_dtype(4), "|V4");
    }

    #[test]
    fn hostile_metalayers_are_errors() {
        let good = unhex(EXAMPLE);
        // Every truncation.
        for n in 0..good.len() {
            assert!(NdMeta::decode(&good[..n]).is_err(), "cut at {n}");
        }
        // Trailing bytes.
        let mut long = good.clone();
        long.push(0);
        assert!(NdMeta::decode(&long).is_err());
        // ndim disagreeing with the lists.
        let mut b = good.clone();
        b[2] = 3;
        assert!(NdMeta::decode(&b).is_err());
        // ndim over the maximum, with lists that long.
        use rmpv::Value as V;
        let n = MAX_DIM + 1;
        let list = V::Array(vec![V::from(1); n]);
        let v = V::Array(vec![
            V::from(0),
            V::from(n as u64),
            list.clone(),
            list.clone(),
            list,
            V::from(0),
            V::from("|u1"),
        ]);
        let mut raw = Vec::new();
        rmpv::encode::write_value(&mut raw, &v).unwrap();
        assert!(NdMeta::decode(&raw).is_err());
        let dims = vec![1; n];
        assert!(NdMeta::new(&dims, &dims, &dims, "|u1").encode().is_err());
        // Negative shape, chunk shape 0 for a non-empty dimension; a block
        // over its chunk is read (C-Blosc2 makes such arrays).
        let mut neg = good.clone();
        neg[5] = 0xff;
        assert!(NdMeta::decode(&neg).is_err());
        let zero = NdMeta::new(&[6, 10], &[0, 5], &[0, 5], "<f8")
            .encode()
            .unwrap();
        assert!(NdMeta::decode(&zero).is_err());
        let big = NdMeta::new(&[6, 10], &[4, 5], &[8, 5], "<f8")
            .encode()
            .unwrap();
        assert_eq!(
            NdMeta::decode(&big).unwrap().blockshape,
            [8, 5],
            "a block longer than its chunk"
        );
        // Chunk shape over i32::MAX.
        let mut over = good.clone();
        over[24] = 0x80;
        assert!(NdMeta::decode(&over).is_err());
        // Not an array, a dtype that is not a string, a huge declared dtype.
        assert!(NdMeta::decode(&[0xc0]).is_err());
        let mut num = good.clone();
        let at = num.len() - 8;
        num.truncate(at);
        num.push(1);
        assert!(NdMeta::decode(&num).is_err());
        let mut huge = good[..good.len() - 8].to_vec();
        huge.extend([0xdb, 0x7f, 0xff, 0xff, 0xff, b'x']);
        assert!(NdMeta::decode(&huge).is_err());
    }
}
