//! Compression parameters from python-blosc2's keyword arguments.

use oxiblosc::{CParams, Codec, Filter, SplitMode};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::calls::threads;
use crate::errors::to_py;

/// A codec from a name (`"zstd"`), an id (`5`) or an enum with `.name` /
/// `.value` (python-blosc2's `blosc2.Codec`).
fn parse_codec(obj: &Bound<'_, PyAny>) -> PyResult<Codec> {
    if let Ok(s) = obj.extract::<String>() {
        return s.parse::<Codec>().map_err(to_py);
    }
    if let Ok(b) = obj.extract::<Vec<u8>>()
        && let Ok(s) = std::str::from_utf8(&b)
    {
        return s.parse::<Codec>().map_err(to_py);
    }
    if let Ok(id) = obj.extract::<u8>() {
        return Codec::from_id(id)
            .ok_or_else(|| PyValueError::new_err(format!("unknown codec id {id}")));
    }
    if let Ok(v) = obj.getattr("value") {
        return parse_codec(&v);
    }
    Err(PyTypeError::new_err(
        "codec must be a name ('blosclz', 'lz4', 'lz4hc', 'zlib', 'zstd') or a codec id",
    ))
}

/// A filter from a name, an id or an enum with `.value`.
fn parse_filter(obj: &Bound<'_, PyAny>, meta: u8) -> PyResult<Option<Filter>> {
    if let Ok(s) = obj.extract::<String>() {
        if s.eq_ignore_ascii_case("nofilter") || s.is_empty() {
            return Ok(None);
        }
        let f: Filter = s.parse().or_else(|e| {
            if s.eq_ignore_ascii_case("trunc_prec") {
                Ok(Filter::TruncPrec(meta))
            } else {
                Err(to_py(e))
            }
        })?;
        return Ok(Some(f));
    }
    if let Ok(id) = obj.extract::<u8>() {
        if id == 0 {
            return Ok(None);
        }
        return Filter::from_id(id, meta)
            .map(Some)
            .ok_or_else(|| PyValueError::new_err(format!("unknown filter id {id}")));
    }
    if let Ok(v) = obj.getattr("value") {
        return parse_filter(&v, meta);
    }
    Err(PyTypeError::new_err(
        "a filter must be a name ('shuffle', 'bitshuffle', 'delta', 'trunc_prec', 'bytedelta') \
         or a filter id",
    ))
}

/// Builds [`CParams`] from python-blosc2's keyword names.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cparams_from(
    codec: Option<&Bound<'_, PyAny>>,
    clevel: Option<i64>,
    typesize: Option<usize>,
    default_typesize: usize,
    filters: Option<&Bound<'_, PyAny>>,
    filters_meta: Option<Vec<i64>>,
    blocksize: Option<usize>,
    splitmode: Option<&Bound<'_, PyAny>>,
    nthreads: Option<usize>,
    use_dict: bool,
) -> PyResult<CParams> {
    let mut p = CParams::default();
    if let Some(c) = codec {
        p = p.codec(parse_codec(c)?);
    }
    if let Some(l) = clevel {
        if !(0..=9).contains(&l) {
            return Err(PyValueError::new_err(format!("clevel {l} is not in 0..=9")));
        }
        p = p.clevel(l as u8);
    }
    let ts = typesize.unwrap_or(default_typesize);
    if ts == 0 {
        return Err(PyValueError::new_err("typesize must be at least 1"));
    }
    p = p.typesize(ts);
    if let Some(fs) = filters {
        let metas = filters_meta.unwrap_or_default();
        let mut list = Vec::new();
        for (i, f) in fs.try_iter()?.enumerate() {
            let m = metas.get(i).copied().unwrap_or(0);
            if !(-128..=255).contains(&m) {
                return Err(PyValueError::new_err(format!(
                    "filters_meta[{i}] = {m} does not fit a byte"
                )));
            }
            if let Some(f) = parse_filter(&f?, m as u8)? {
                list.push((f, m as u8));
            }
        }
        if list.len() > 6 {
            return Err(PyValueError::new_err("at most 6 filters"));
        }
        p = p.filters_with_meta(&list);
    }
    if let Some(b) = blocksize {
        p = p.blocksize(b);
    }
    if let Some(s) = splitmode {
        let id: u8 = match s.extract::<u8>() {
            Ok(v) => v,
            Err(_) => s.getattr("value")?.extract()?,
        };
        p = p.splitmode(match id {
            1 => SplitMode::Always,
            2 => SplitMode::Never,
            3 => SplitMode::Auto,
            4 => SplitMode::ForwardCompat,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "splitmode {id} is not 1 (always), 2 (never), 3 (auto) or 4 (forward compat)"
                )));
            }
        });
    }
    p = p.nthreads(threads(nthreads)?).use_dict(use_dict);
    p.validate().map_err(to_py)?;
    Ok(p)
}
