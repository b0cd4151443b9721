//! Metalayers (fixed-size, in the header) and vlmetalayers (compressed, in
//! the trailer), and the msgpack map section both are stored in.

use super::{MAX_NAME_LEN, decode_limit};
use crate::chunk::ChunkHeader;
use crate::error::{Error, Result, corrupt, invalid_param};

/// A fixed-size metalayer of the header: a name and opaque bytes
/// (python-blosc2 stores msgpack: [`Metalayer::decode`] reads it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Metalayer {
    /// Name, shorter than 32 bytes.
    pub name: String,
    /// Content.
    pub content: Vec<u8>,
}

/// A variable-length metalayer of the trailer: the value is stored as a
/// compressed Blosc2 chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlMetalayer {
    /// Name, shorter than 32 bytes.
    pub name: String,
    /// The stored chunk (decompress for the value).
    pub chunk: Vec<u8>,
}

impl Metalayer {
    /// The content read as one msgpack value (python-blosc2 and C-Blosc2's
    /// b2nd metalayer store msgpack), through `rmpv`.
    ///
    /// # Errors
    /// [`Error::Corrupt`] when the content is not one whole msgpack value.
    pub fn decode(&self) -> Result<MsgpackValue> {
        decode_named(&self.content, "metalayer", &self.name)
    }
}

impl VlMetalayer {
    /// The value decompressed (see [`VlMetalayer::value`]) and read as one
    /// msgpack value (python-blosc2 stores msgpack), through `rmpv`.
    ///
    /// # Errors
    /// As [`VlMetalayer::value`]; [`Error::Corrupt`] when the value is not
    /// one whole msgpack value.
    pub fn decode_value(&self) -> Result<MsgpackValue> {
        decode_named(&self.value()?, "vlmetalayer", &self.name)
    }

    /// The value: the chunk decompressed (up to [`decode_limit`] of its size).
    ///
    /// # Errors
    /// The chunk decoder's errors; [`Error::Corrupt`] over the limit.
    pub fn value(&self) -> Result<Vec<u8>> {
        let h = ChunkHeader::parse(&self.chunk)?;
        if h.cbytes != self.chunk.len() || h.nbytes > decode_limit(h.cbytes as u64) {
            return Err(corrupt(format!(
                "vlmetalayer {:?}: bad value chunk",
                self.name
            )));
        }
        crate::decompress(&self.chunk)
    }
}

/// A decoded msgpack value (`rmpv::Value`).
pub type MsgpackValue = rmpv::Value;

/// `bytes` as exactly one msgpack value (a metalayer's content, a
/// vlmetalayer's value), through `rmpv`. `rmpv` sizes nothing by a declared
/// length beyond 64 KiB and limits nesting, so hostile bytes cannot make it
/// allocate more than they could fill.
///
/// ```
/// use oxiblosc::frame::{MsgpackValue, decode_msgpack};
/// assert_eq!(decode_msgpack(&[0xa2, b'h', b'i']).unwrap(), MsgpackValue::from("hi"));
/// assert!(decode_msgpack(&[0xa2, b'h']).is_err()); // cut
/// assert!(decode_msgpack(&[0x01, 0x02]).is_err()); // two values
/// ```
///
/// # Errors
/// [`Error::Corrupt`] when `bytes` are not one whole msgpack value.
pub fn decode_msgpack(bytes: &[u8]) -> Result<MsgpackValue> {
    let mut rd = bytes;
    let v = rmpv::decode::read_value(&mut rd).map_err(|e| corrupt(format!("not msgpack ({e})")))?;
    if !rd.is_empty() {
        return Err(corrupt(format!(
            "{} bytes after its msgpack value",
            rd.len()
        )));
    }
    Ok(v)
}

/// [`decode_msgpack`], its error naming the (vl)metalayer.
fn decode_named(bytes: &[u8], what: &str, name: &str) -> Result<MsgpackValue> {
    decode_msgpack(bytes).map_err(|e| match e {
        Error::Corrupt(m) => corrupt(format!("{what} {name:?}: {m}")),
        e => e,
    })
}

/// `value` as msgpack bytes, each item in its shortest encoding (as
/// python-blosc2 writes metalayer values): a string of fewer than 32 bytes
/// is a fixstr, then str8, str16, str32.
///
/// ```
/// use oxiblosc::frame::{MsgpackValue, encode_msgpack};
/// assert_eq!(encode_msgpack(&MsgpackValue::from("hi")), [0xa2, b'h', b'i']);
/// ```
pub fn encode_msgpack(value: &MsgpackValue) -> Vec<u8> {
    let mut out = Vec::new();
    rmpv::encode::write_value(&mut out, value).expect("writing to a Vec cannot fail");
    out
}

/// A short printable view of a (vl)metalayer value, as `oxiblosc info`
/// shows it: one whole msgpack string as quoted text (Rust's `{:?}`),
/// anything else as lowercase hex, cut after `max` bytes with `...`.
///
/// ```
/// use oxiblosc::frame::msgpack_preview;
/// assert_eq!(msgpack_preview(&[0xa2, b'h', b'i'], 32), "\"hi\"");
/// assert_eq!(msgpack_preview(&[0x93, 1, 2, 3], 32), "93010203");
/// assert_eq!(msgpack_preview(&[0x93, 1, 2, 3], 2), "9301...");
/// ```
pub fn msgpack_preview(bytes: &[u8], max: usize) -> String {
    if let Ok(MsgpackValue::String(s)) = decode_msgpack(bytes)
        && let Some(text) = s.as_str()
    {
        return format!("{text:?}");
    }
    let shown = &bytes[..bytes.len().min(max)];
    let mut hex = String::with_capacity(2 * shown.len() + 3);
    for b in shown {
        hex.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('?'));
        hex.push(char::from_digit(u32::from(b & 15), 16).unwrap_or('?'));
    }
    if shown.len() < bytes.len() {
        hex.push_str("...");
    }
    hex
}

/// A (vl)metalayer value as one line of readable text, when `bytes` is
/// exactly one msgpack value (msgpack's own text form: strings quoted,
/// arrays in brackets, maps in braces), cut after about 200 characters
/// with `...`; `None` for anything else.
///
/// ```
/// use oxiblosc::frame::msgpack_text;
/// assert_eq!(msgpack_text(&[0x93, 1, 2, 3]).as_deref(), Some("[1, 2, 3]"));
/// assert_eq!(msgpack_text(&[0xa2, b'h', b'i']).as_deref(), Some("\"hi\""));
/// assert_eq!(msgpack_text(&[0x93, 1]), None); // truncated array
/// ```
pub fn msgpack_text(bytes: &[u8]) -> Option<String> {
    let mut rd = bytes;
    let v = rmpv::decode::read_value(&mut rd).ok()?;
    if !rd.is_empty() {
        return None;
    }
    let mut t = v.to_string();
    if t.len() > 200 {
        let cut = (0..=200)
            .rev()
            .find(|&i| t.is_char_boundary(i))
            .unwrap_or(0);
        t.truncate(cut);
        t.push_str("...");
    }
    Some(t)
}

/// Check a name for a metalayer or vlmetalayer: 1-31 bytes, none of them
/// NUL (a name is a C string to C-Blosc2: it would read `"a\0b"` as
/// `"a"`).
pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(invalid_param(format!(
            "metalayer name {name:?} must be 1..=31 bytes"
        )));
    }
    check_stored_name(name)
}

/// Check a name a frame holds (read from one, to be written again): at
/// most 31 bytes, no NUL; unlike [`check_name`], which new names pass,
/// an empty one is kept (C-Blosc2 writes one: it checks the length alone,
/// and reads a name up to its first NUL, as the readers here do).
pub(crate) fn check_stored_name(name: &str) -> Result<()> {
    if name.len() >= MAX_NAME_LEN || name.contains('\0') {
        return Err(invalid_param(format!(
            "metalayer name {name:?} must be 1..=31 bytes and hold no NUL"
        )));
    }
    Ok(())
}

/// A little cursor over a byte slice with checked reads.
pub(super) struct Cur<'a> {
    pub(super) b: &'a [u8],
    pub(super) p: usize,
    pub(super) what: &'static str,
}

impl<'a> Cur<'a> {
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self
            .p
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(Error::Truncated {
                what: self.what,
                needed: self.p.saturating_add(n),
                available: self.b.len(),
            })?;
        let s = &self.b[self.p..end];
        self.p = end;
        Ok(s)
    }
    pub(super) fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub(super) fn expect(&mut self, m: u8) -> Result<()> {
        let at = self.p;
        let x = self.u8()?;
        if x != m {
            return Err(corrupt(format!(
                "{}: marker {x:#04x} at {at}, expected {m:#04x}",
                self.what
            )));
        }
        Ok(())
    }
    pub(super) fn be_u16(&mut self) -> Result<u16> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    pub(super) fn be_i32(&mut self) -> Result<i32> {
        let s = self.take(4)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
}

/// Parse a metalayer-style section: `93 cd idx de count {name d2 off}*
/// dc count {c6 len content}*`. `b` is the whole region the offsets point
/// into (from the frame or trailer start), `start` where the section begins.
pub(super) fn parse_meta_section(
    b: &[u8],
    start: usize,
    max: usize,
    what: &'static str,
) -> Result<Vec<(String, Vec<u8>)>> {
    Ok(meta_section_spans(b, start, max, what)?
        .into_iter()
        .map(|(name, at, len)| (name, b[at..at + len].to_vec()))
        .collect())
}

/// [`parse_meta_section`]'s entries as where their contents lie in `b`:
/// (name, first byte, length), each within `b`.
pub(super) fn meta_section_spans(
    b: &[u8],
    start: usize,
    max: usize,
    what: &'static str,
) -> Result<Vec<(String, usize, usize)>> {
    let mut c = Cur { b, p: start, what };
    c.expect(0x93)?;
    c.expect(0xcd)?;
    c.be_u16()?;
    c.expect(0xde)?;
    let n = usize::from(c.be_u16()?);
    if n > max {
        return Err(corrupt(format!("{what}: {n} entries (at most {max})")));
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let m = c.u8()?;
        if !(0xa0..=0xbf).contains(&m) {
            return Err(corrupt(format!("{what}: name marker {m:#04x}")));
        }
        let name = c.take(usize::from(m & 0x1f))?;
        // A C string to C-Blosc2, which reads the bytes up to the first
        // NUL as the name (and finds the layer by it): so here.
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        let name = String::from_utf8(name.to_vec())
            .map_err(|_| corrupt(format!("{what}: name is not UTF-8")))?;
        c.expect(0xd2)?;
        let off = c.be_i32()?;
        let off = usize::try_from(off)
            .ok()
            .filter(|&o| o < b.len())
            .ok_or_else(|| corrupt(format!("{what}: value offset {off} out of range")))?;
        let mut v = Cur { b, p: off, what };
        v.expect(0xc6)?;
        let s = v.take(4)?;
        let len = u32::from_be_bytes([s[0], s[1], s[2], s[3]]);
        if len > i32::MAX as u32 {
            return Err(corrupt(format!("{what}: value length {len}")));
        }
        let at = v.p;
        v.take(len as usize)?;
        out.push((name, at, len as usize));
    }
    Ok(out)
}

pub(super) fn encode_meta_section(
    out: &mut Vec<u8>,
    entries: &[(&str, &[u8])],
    base: usize,
    rel: usize,
) {
    // base: where `out` index 0 sits relative to the offset origin.
    let start = out.len();
    out.push(0x93);
    out.extend_from_slice(&[0xcd, 0, 0]);
    out.push(0xde);
    out.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    let mut slots = Vec::with_capacity(entries.len());
    for (name, _) in entries {
        out.push(0xa0 | name.len() as u8);
        out.extend_from_slice(name.as_bytes());
        out.push(0xd2);
        slots.push(out.len());
        out.extend_from_slice(&[0; 4]);
    }
    let idx = (out.len() - start - rel) as u16;
    out[start + 2..start + 4].copy_from_slice(&idx.to_be_bytes());
    out.push(0xdc);
    out.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    for ((_, content), slot) in entries.iter().zip(slots) {
        let off = (base + out.len()) as i32;
        out[slot..slot + 4].copy_from_slice(&off.to_be_bytes());
        out.push(0xc6);
        out.extend_from_slice(&(content.len() as u32).to_be_bytes());
        out.extend_from_slice(content);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(content: &[u8]) -> Metalayer {
        Metalayer {
            name: "m".into(),
            content: content.to_vec(),
        }
    }

    #[test]
    fn msgpack_values_decode_and_bad_bytes_are_errors() {
        let v = meta(&[0x93, 0x01, 0xa1, b'x', 0xc3]).decode().unwrap();
        assert_eq!(
            v,
            MsgpackValue::Array(vec![1.into(), "x".into(), true.into()])
        );
        // Truncated, trailing bytes, a 4 GiB array or binary declared in a
        // few bytes, and a deep nest: errors, no panic, no huge allocation.
        for bad in [
            &[0x93, 0x01][..],
            &[0x01, 0x02],
            &[0xdd, 0xff, 0xff, 0xff, 0xff],
            &[0xc6, 0xff, 0xff, 0xff, 0xff, 0x00],
            &[0x91; 4096],
            &[],
        ] {
            assert!(meta(bad).decode().is_err(), "{bad:?}");
        }
    }
}
