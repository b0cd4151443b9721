//! NumPy `.npy` files (format versions 1.0, 2.0 and 3.0): the header, and
//! the item size of a dtype string.
//!
//! A file is the magic `\x93NUMPY`, the version, the header length (2 bytes
//! in 1.0, 4 in 2.0 and 3.0; little-endian), then a Python dict literal
//! `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }` padded
//! with spaces and a newline so the data starts at a multiple of 64; then
//! the items in C order. Only C-ordered arrays of plain (non-object,
//! non-structured) dtypes are read; anything else is a clear error.

use crate::error::{Error, Result};

/// The magic string every `.npy` file starts with.
pub const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// The longest header accepted on reading (numpy's own limit is 10 000
/// bytes by default; 1 MiB leaves room and bounds the allocation).
pub const MAX_HEADER_LEN: usize = 1 << 20;

/// What a `.npy` header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    /// The dtype string (`descr`), e.g. `<f4`, `|u1`, `>i8`. A structured
    /// dtype's description (a Python list literal) is kept as its text when
    /// writing; reading one is an error.
    pub dtype: String,
    /// The shape (empty: a 0-dimensional array of one item).
    pub shape: Vec<u64>,
}

fn bad(why: impl std::fmt::Display) -> Error {
    Error::Corrupt(format!(".npy header: {why}"))
}

/// The size in bytes of one item of a NumPy dtype string: an optional byte
/// order (`<`, `>`, `=`, `|`), a kind and a size, as `np.dtype(...).str`
/// gives them (`?`, `b1`, `i8`, `u2`, `f4`, `c16`, `S10`, `V8`, `<U3` (4
/// bytes a character), `<M8[s]`, `<m8[ns]`).
///
/// ```
/// use oxiblosc::ndarray::dtype_itemsize;
/// assert_eq!(dtype_itemsize("<f4").unwrap(), 4);
/// assert_eq!(dtype_itemsize("<U3").unwrap(), 12);
/// assert!(dtype_itemsize("|O").is_err());
/// ```
///
/// # Errors
/// [`Error::Unsupported`] for object (`O`) and structured dtypes;
/// [`Error::InvalidParam`] for anything else that is not a dtype string.
pub fn dtype_itemsize(dtype: &str) -> Result<usize> {
    let t = dtype.trim();
    if t.starts_with('[') || t.starts_with('{') {
        return Err(Error::Unsupported(format!(
            "structured dtype {dtype:?} (only plain dtypes like <f8 are read)"
        )));
    }
    let t = t.strip_prefix(['<', '>', '=', '|']).unwrap_or(t);
    let mut chars = t.chars();
    let kind = chars
        .next()
        .ok_or_else(|| Error::InvalidParam("empty dtype".into()))?;
    let rest = chars.as_str();
    if kind == 'O' {
        return Err(Error::Unsupported(format!(
            "object dtype {dtype:?}: the items are Python objects, not bytes"
        )));
    }
    // Datetimes and timedeltas carry a unit: `<M8[s]`.
    let digits = match rest.find('[') {
        Some(i) if matches!(kind, 'M' | 'm') && rest.ends_with(']') => &rest[..i],
        _ => rest,
    };
    let size: usize = match (kind, digits) {
        ('?', "") | ('b' | 'B', "") => 1,
        ('?' | 'b' | 'i' | 'u' | 'f' | 'c' | 'S' | 'a' | 'V' | 'U' | 'M' | 'm', d)
            if !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()) && d.len() <= 10 =>
        {
            d.parse()
                .map_err(|_| Error::InvalidParam(format!("bad size in dtype {dtype:?}")))?
        }
        _ => {
            return Err(Error::InvalidParam(format!(
                "unknown dtype {dtype:?} (e.g. <f4, |u1, >i8)"
            )));
        }
    };
    let size = if kind == 'U' {
        size.checked_mul(4)
            .ok_or_else(|| Error::InvalidParam(format!("dtype {dtype:?} too large")))?
    } else {
        size
    };
    if size == 0 || size > crate::params::MAX_BLOCKSIZE {
        return Err(Error::InvalidParam(format!(
            "dtype {dtype:?} has item size {size}"
        )));
    }
    Ok(size)
}

/// The item size numpy gives `dtype` as the `descr` of a `.npy` header,
/// when numpy reads the text as that dtype and no item holds a Python
/// object: a plain dtype ([`dtype_itemsize`], printable ASCII without
/// quotes or backslashes), or a structured one in the list form
/// `str(numpy.dtype)` prints (`[('a', '<i4'), ('b', '<f8', (2,))]`,
/// fields nested or not, names distinct), written exactly as Python
/// prints it, so that numpy's reader sees the same fields.
///
/// ```
/// use oxiblosc::ndarray::npy_itemsize;
/// assert_eq!(npy_itemsize("[('a', '<i4'), ('b', '<f8', (2,))]").unwrap(), 20);
/// assert!(npy_itemsize("|O").is_err());
/// assert!(npy_itemsize("[('a', 'O')]").is_err());
/// ```
///
/// # Errors
/// [`Error::Unsupported`] for anything else (dict forms, other spellings
/// of a list, objects); [`Error::InvalidParam`] for a plain dtype that is
/// not one.
pub fn npy_itemsize(dtype: &str) -> Result<usize> {
    if !dtype.starts_with('[') {
        if !dtype
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'\'' && b != b'\\')
        {
            return Err(Error::InvalidParam(format!(
                "dtype {dtype:?} holds a quote, a backslash or a character that is not printable ASCII"
            )));
        }
        let size = dtype_itemsize(dtype)?;
        numpy_size(dtype, size)?;
        return Ok(size);
    }
    let unsupported =
        |why: String| Error::Unsupported(format!("structured dtype {dtype:?}: {why}"));
    let mut p = Parser {
        s: dtype.as_bytes(),
        at: 0,
        depth: 0,
    };
    let v = p.value().map_err(|e| unsupported(e.to_string()))?;
    let mut text = String::new();
    let size = fields(&v, &mut text).map_err(|e| unsupported(e.to_string()))?;
    if text != dtype {
        return Err(unsupported(format!(
            "not written as numpy prints it ({text:?})"
        )));
    }
    Ok(size)
}

/// Whether numpy has the plain dtype `dtype` (whose size
/// [`dtype_itemsize`] gave as `size`): booleans of 1 byte, integers of 1,
/// 2, 4 or 8, floats of 2, 4, 8 or 16, complex numbers of 8, 16 or 32,
/// datetimes and timedeltas of 8 with a unit numpy knows (`ms`, `10s`,
/// `generic`...); strings and void items of any size.
fn numpy_size(dtype: &str, size: usize) -> Result<()> {
    let t = dtype.strip_prefix(['<', '>', '=', '|']).unwrap_or(dtype);
    let kind = t.chars().next().unwrap_or(' ');
    let ok = match kind {
        '?' | 'b' => size == 1 && (t.len() == 1 || &t[1..] == "1"),
        'i' | 'u' => matches!(size, 1 | 2 | 4 | 8),
        'f' => matches!(size, 2 | 4 | 8 | 16),
        'c' => matches!(size, 8 | 16 | 32),
        'M' | 'm' => {
            let unit = t[1..]
                .split_once('[')
                .map(|(_, u)| u.trim_end_matches(']'))
                .unwrap_or("generic");
            let unit = unit.trim_start_matches(|c: char| c.is_ascii_digit());
            size == 8
                && matches!(
                    unit,
                    "Y" | "M"
                        | "W"
                        | "D"
                        | "h"
                        | "m"
                        | "s"
                        | "ms"
                        | "us"
                        | "μs"
                        | "ns"
                        | "ps"
                        | "fs"
                        | "as"
                        | "generic"
                )
        }
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::InvalidParam(format!("numpy has no dtype {dtype:?}")))
    }
}

/// The item size of a structured dtype's field list `v`, which is also
/// printed into `out` as Python prints it (see [`npy_itemsize`]).
fn fields(v: &Lit, out: &mut String) -> Result<usize> {
    let Lit::Seq(items) = v else {
        return Err(bad("not a list of fields"));
    };
    if items.is_empty() {
        return Err(bad("no fields"));
    }
    let mut names = std::collections::HashSet::new();
    let mut total = 0usize;
    out.push('[');
    for (k, f) in items.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let (name, fmt, shape) = match f {
            Lit::Seq(p) => match p.as_slice() {
                [Lit::Str(n), fmt] => (n, fmt, None),
                [Lit::Str(n), fmt, shape] => (n, fmt, Some(shape)),
                _ => return Err(bad("a field is not (name, format[, shape])")),
            },
            _ => return Err(bad("a field is not a tuple")),
        };
        // Python prints these names between single quotes as they are.
        if name.chars().any(|c| {
            c == '\'' || c == '\\' || !(c.is_ascii_graphic() || c == ' ' || c.is_alphanumeric())
        }) {
            return Err(bad(format!("field name {name:?}")));
        }
        if !names.insert(name.as_str()) {
            return Err(bad(format!("field {name:?} twice")));
        }
        out.push_str(&format!("('{name}', "));
        let size = match fmt {
            Lit::Str(s) => {
                out.push_str(&format!("'{s}'"));
                npy_itemsize(s)?
            }
            Lit::Seq(_) => fields(fmt, out)?,
            _ => return Err(bad(format!("field {name:?}: a format that is not a dtype"))),
        };
        let mut count = 1usize;
        if let Some(shape) = shape {
            let Lit::Seq(dims) = shape else {
                return Err(bad(format!("field {name:?}: a shape that is not a tuple")));
            };
            if dims.is_empty() {
                return Err(bad(format!("field {name:?}: an empty shape")));
            }
            out.push_str(", (");
            for (j, d) in dims.iter().enumerate() {
                let Lit::Int(d) = d else {
                    return Err(bad(format!("field {name:?}: a shape of non-numbers")));
                };
                if j > 0 {
                    out.push_str(", ");
                }
                out.push_str(&d.to_string());
                count = usize::try_from(*d)
                    .ok()
                    .and_then(|d| count.checked_mul(d))
                    .ok_or_else(|| bad(format!("field {name:?}: a shape too large")))?;
            }
            out.push_str(if dims.len() == 1 { ",)" } else { ")" });
        }
        out.push(')');
        total = size
            .checked_mul(count)
            .and_then(|n| total.checked_add(n))
            .filter(|&n| n <= crate::params::MAX_BLOCKSIZE)
            .ok_or_else(|| bad("the items are too large"))?;
    }
    out.push(']');
    Ok(total)
}

/// A Python literal, as far as `.npy` headers use them.
#[derive(Debug)]
enum Lit {
    Str(String),
    Int(u64),
    Bool(bool),
    Seq(Vec<Lit>),
    Dict(Vec<(String, Lit)>),
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.at).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }
    fn value(&mut self) -> Result<Lit> {
        self.depth += 1;
        if self.depth > 32 {
            return Err(bad("nested too deeply"));
        }
        let v = match self.peek().ok_or_else(|| bad("ends early"))? {
            q @ (b'\'' | b'"') => {
                self.at += 1;
                let start = self.at;
                while self.at < self.s.len() && self.s[self.at] != q {
                    if self.s[self.at] == b'\\' {
                        return Err(bad("escapes in strings are not supported"));
                    }
                    self.at += 1;
                }
                if self.at >= self.s.len() {
                    return Err(bad("unterminated string"));
                }
                let text = std::str::from_utf8(&self.s[start..self.at])
                    .map_err(|_| bad("a string is not UTF-8"))?;
                self.at += 1;
                Lit::Str(text.to_string())
            }
            b'0'..=b'9' => {
                let start = self.at;
                while self.at < self.s.len() && self.s[self.at].is_ascii_digit() {
                    self.at += 1;
                }
                // A trailing `L` (Python 2 longs) is accepted as numpy does.
                let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                if self.s.get(self.at) == Some(&b'L') {
                    self.at += 1;
                }
                Lit::Int(
                    text.parse()
                        .map_err(|_| bad(format!("number {text} too large")))?,
                )
            }
            open @ (b'(' | b'[') => {
                self.at += 1;
                let close = if open == b'(' { b')' } else { b']' };
                let mut items = Vec::new();
                loop {
                    if self.eat(close) {
                        break;
                    }
                    items.push(self.value()?);
                    if !self.eat(b',') {
                        if self.eat(close) {
                            break;
                        }
                        return Err(bad("expected `,` or the end of a sequence"));
                    }
                }
                Lit::Seq(items)
            }
            b'{' => {
                self.at += 1;
                let mut fields = Vec::new();
                loop {
                    if self.eat(b'}') {
                        break;
                    }
                    let Lit::Str(k) = self.value()? else {
                        return Err(bad("a key that is not a string"));
                    };
                    if !self.eat(b':') {
                        return Err(bad("expected `:`"));
                    }
                    let v = self.value()?;
                    fields.push((k, v));
                    if !self.eat(b',') {
                        if self.eat(b'}') {
                            break;
                        }
                        return Err(bad("expected `,` or `}`"));
                    }
                }
                Lit::Dict(fields)
            }
            _ if self.s[self.at..].starts_with(b"True") => {
                self.at += 4;
                Lit::Bool(true)
            }
            _ if self.s[self.at..].starts_with(b"False") => {
                self.at += 5;
                Lit::Bool(false)
            }
            c => return Err(bad(format!("unexpected {:?}", c as char))),
        };
        self.depth -= 1;
        Ok(v)
    }
}

/// Read a `.npy` header; returns it and the offset of the data.
///
/// # Errors
/// [`Error::Truncated`] when the bytes end inside the header;
/// [`Error::Corrupt`] for a bad magic, version or header literal;
/// [`Error::Unsupported`] for a Fortran-ordered array, an object or a
/// structured dtype, or a header over [`MAX_HEADER_LEN`].
pub fn read_header(bytes: &[u8]) -> Result<(NpyHeader, usize)> {
    let need = |n: usize| -> Result<()> {
        if bytes.len() < n {
            Err(Error::Truncated {
                what: ".npy header",
                needed: n,
                available: bytes.len(),
            })
        } else {
            Ok(())
        }
    };
    need(8)?;
    if &bytes[..6] != MAGIC {
        return Err(bad("not a .npy file (no \\x93NUMPY magic)"));
    }
    let (len, start) = match (bytes[6], bytes[7]) {
        (1, 0) => {
            need(10)?;
            (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
        }
        (2 | 3, 0) => {
            need(12)?;
            let l = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
            (usize::try_from(l).unwrap_or(usize::MAX), 12)
        }
        (a, b) => return Err(bad(format!("unknown format version {a}.{b}"))),
    };
    if len > MAX_HEADER_LEN {
        return Err(Error::Unsupported(format!(
            ".npy header of {len} bytes (at most {MAX_HEADER_LEN})"
        )));
    }
    need(start + len)?;
    let text = &bytes[start..start + len];
    if bytes[6] < 3 && !text.is_ascii() {
        return Err(bad("a version 1 or 2 header must be ASCII"));
    }
    let mut p = Parser {
        s: text,
        at: 0,
        depth: 0,
    };
    let Lit::Dict(fields) = p.value()? else {
        return Err(bad("not a dict"));
    };
    p.ws();
    if p.at != text.len() {
        return Err(bad("text after the dict"));
    }
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in fields {
        match (k.as_str(), v) {
            ("descr", Lit::Str(s)) => descr = Some(s),
            ("descr", _) => {
                return Err(Error::Unsupported(
                    "structured dtype (only plain dtypes like <f8 are read)".into(),
                ));
            }
            ("fortran_order", Lit::Bool(b)) => fortran = Some(b),
            ("shape", Lit::Seq(items)) => {
                let dims = items
                    .into_iter()
                    .map(|d| match d {
                        Lit::Int(n) if n <= i64::MAX as u64 => Ok(n),
                        other => Err(bad(format!("shape entry {other:?}"))),
                    })
                    .collect::<Result<Vec<u64>>>()?;
                shape = Some(dims);
            }
            (k, v) => return Err(bad(format!("unexpected key {k:?} = {v:?}"))),
        }
    }
    let (Some(dtype), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err(bad("needs the keys descr, fortran_order and shape"));
    };
    if fortran {
        return Err(Error::Unsupported(
            "a Fortran-ordered .npy (fortran_order True); save a C-ordered array".into(),
        ));
    }
    dtype_itemsize(&dtype)?;
    Ok((NpyHeader { dtype, shape }, start + len))
}

impl NpyHeader {
    /// Items in the array (`None` on overflow).
    pub fn nitems(&self) -> Option<u64> {
        self.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
    }

    /// Bytes of the data (`None` on overflow or an unreadable dtype).
    pub fn data_nbytes(&self) -> Option<u64> {
        self.nitems()?
            .checked_mul(dtype_itemsize(&self.dtype).ok()? as u64)
    }

    /// The header as `np.save` writes it: version 1.0 (2.0 when over 65535
    /// bytes, 3.0 when the dtype is not ASCII), the dict with spare room
    /// after the shape, padded so the data starts at a multiple of 64.
    pub fn encode(&self) -> Vec<u8> {
        let descr = if self.dtype.starts_with('[') {
            self.dtype.clone()
        } else {
            format!("'{}'", self.dtype)
        };
        let shape = match self.shape.as_slice() {
            [] => "()".to_string(),
            [d] => format!("({d},)"),
            dims => format!(
                "({})",
                dims.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {shape}, }}");
        // numpy leaves room for the first dimension to grow to 21 digits.
        if let Some(d) = self.shape.first() {
            let digits = d.to_string().len();
            dict.push_str(&" ".repeat(21usize.saturating_sub(digits)));
        }
        let ascii = dict.is_ascii();
        for (major, prefix) in [(1u8, 10usize), (2, 12)] {
            let major = if ascii { major } else { 3 };
            let total = (prefix + dict.len() + 1).div_ceil(64) * 64;
            let hlen = total - prefix;
            if prefix == 10 && (hlen > u16::MAX as usize || !ascii) {
                continue;
            }
            let mut out = Vec::with_capacity(total);
            out.extend_from_slice(MAGIC);
            out.extend([major, 0]);
            if prefix == 10 {
                out.extend((hlen as u16).to_le_bytes());
            } else {
                out.extend((hlen as u32).to_le_bytes());
            }
            out.extend_from_slice(dict.as_bytes());
            out.resize(total - 1, b' ');
            out.push(b'\n');
            return out;
        }
        unreachable!("the 4-byte length always fits")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip_and_layout() {
        let h = NpyHeader {
            dtype: "<f8".into(),
            shape: vec![3, 4],
        };
        let b = h.encode();
        assert_eq!(b.len() % 64, 0);
        assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(*b.last().unwrap(), b'\n');
        assert_eq!(read_header(&b).unwrap(), (h, b.len()));
        for shape in [vec![], vec![5], vec![0, 2, 3]] {
            let h = NpyHeader {
                dtype: "|u1".into(),
                shape,
            };
            assert_eq!(read_header(&h.encode()).unwrap().0, h);
        }
    }

    #[test]
    fn versions_2_and_3() {
        let dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }";
        for (major, text) in [(2u8, dict.to_string()), (3, dict.to_string())] {
            let mut b = b"\x93NUMPY".to_vec();
            b.extend([major, 0]);
            b.extend((text.len() as u32).to_le_bytes());
            b.extend(text.as_bytes());
            let (h, at) = read_header(&b).unwrap();
            assert_eq!((h.shape, h.dtype.as_str(), at), (vec![3], "<u2", b.len()));
        }
        // Non-ASCII text needs version 3: in a version 1 header it is an error.
        let text = "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), 'é': 1}";
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((text.len() as u16).to_le_bytes());
        b.extend(text.as_bytes());
        assert!(read_header(&b).is_err());
        // A header over 64 KiB is written as version 2, a non-ASCII one as 3.
        let long = NpyHeader {
            dtype: format!("[{}('a', '<i4')]", " ".repeat(70_000)),
            shape: vec![2],
        }
        .encode();
        assert_eq!((long[6], long.len() % 64), (2, 0));
        let wide = NpyHeader {
            dtype: "[('é', '<i4')]".into(),
            shape: vec![2],
        }
        .encode();
        assert_eq!((wide[6], wide.len() % 64), (3, 0));
        assert_eq!(*wide.last().unwrap(), b'\n');
    }

    #[test]
    fn itemsizes() {
        for (s, n) in [
            ("<f4", 4),
            ("|u1", 1),
            (">i8", 8),
            ("|b1", 1),
            ("?", 1),
            ("<c16", 16),
            ("|S10", 10),
            ("<U3", 12),
            ("|V7", 7),
            ("<M8[s]", 8),
            ("<m8[ns]", 8),
        ] {
            assert_eq!(dtype_itemsize(s).unwrap(), n, "{s}");
        }
        for s in [
            "",
            "<",
            "x4",
            "<f",
            "<f0",
            "|O",
            "<f99999999999",
            "[('a', '<i4')]",
        ] {
            assert!(dtype_itemsize(s).is_err(), "{s}");
        }
    }

    #[test]
    fn bad_headers_are_errors() {
        let good = NpyHeader {
            dtype: "<i2".into(),
            shape: vec![2, 2],
        }
        .encode();
        for n in 0..good.len() {
            assert!(read_header(&good[..n]).is_err(), "cut at {n}");
        }
        let with = |dict: &str| {
            let mut b = b"\x93NUMPY\x01\x00".to_vec();
            b.extend((dict.len() as u16).to_le_bytes());
            b.extend(dict.as_bytes());
            read_header(&b)
        };
        assert!(with("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }").is_ok());
        assert!(matches!(
            with("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }"),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            with("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }"),
            Err(Error::Unsupported(_))
        ));
        assert!(matches!(
            with("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }"),
            Err(Error::Unsupported(_))
        ));
        for d in [
            "{'descr': '<f8', 'shape': (2,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'x': 1}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} junk",
            "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
            "{'descr': '<f8",
        ] {
            assert!(with(d).is_err(), "{d}");
        }
        let mut v9 = good.clone();
        v9[6] = 9;
        assert!(read_header(&v9).is_err());
    }
}
