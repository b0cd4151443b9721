//! Metalayers (in the header; added only while there are no chunks) and
//! vlmetalayers (in the trailer, each change one crash-safe commit).

use std::borrow::Cow;

use super::commit::MetaChange;
use super::space::Space;
use super::{SChunk, Tail};
use crate::chunk::ChunkHeader;
use crate::error::{Result, corrupt, invalid_param};
use crate::frame::{self, Metalayer, Offsets, VlMetalayer};
use crate::params::CParams;

impl SChunk {
    /// The metalayers, in stored order.
    pub fn metalayers(&self) -> &[Metalayer] {
        &self.metalayers
    }

    /// The content of metalayer `name`.
    pub fn meta_get(&self, name: &str) -> Option<&[u8]> {
        self.metalayers
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.as_slice())
    }

    /// Whether metalayer `name` exists.
    pub fn meta_exists(&self, name: &str) -> bool {
        self.meta_get(name).is_some()
    }

    /// Add a metalayer; only while the super-chunk has no chunks (the
    /// header grows). At most 16, names up to 31 bytes.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) when there are chunks, the name exists, or a
    /// limit is hit.
    pub fn meta_add(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_editable()?;
        frame::check_name(name)?;
        if self.meta_exists(name) {
            return Err(invalid_param(format!("metalayer {name:?} exists")));
        }
        if self.nchunks() != 0 {
            return Err(invalid_param(
                "metalayers can only be added before any chunk",
            ));
        }
        let mut metas = self.metalayers.clone();
        metas.push(Metalayer {
            name: name.to_string(),
            content: content.to_vec(),
        });
        self.rewrite_empty(metas)
    }

    /// The metalayers with `name`'s content overwritten by `content` (as
    /// [`SChunk::meta_update`] stores it: not longer than the old; a
    /// shorter one overwrites the first bytes).
    pub(super) fn metas_updated(&self, name: &str, content: &[u8]) -> Result<Vec<Metalayer>> {
        let mut metas = self.metalayers.clone();
        let m = metas
            .iter_mut()
            .find(|m| m.name == name)
            .ok_or_else(|| invalid_param(format!("no metalayer {name:?}")))?;
        if content.len() > m.content.len() {
            return Err(invalid_param(format!(
                "metalayer {name:?}: {} bytes do not fit its {}",
                content.len(),
                m.content.len()
            )));
        }
        m.content[..content.len()].copy_from_slice(content);
        Ok(metas)
    }

    /// Overwrite metalayer `name`. As in C-Blosc2 the new content may not
    /// be longer than the old; a shorter one overwrites the first bytes and
    /// the stored length stays (the old tail remains). Crash-safe for a
    /// frame in a file: a crash leaves the old or the new content (see
    /// the [module docs](super) for how).
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) for an unknown name or longer content.
    pub fn meta_update(&mut self, name: &str, content: &[u8]) -> Result<()> {
        self.check_editable()?;
        let metas = self.metas_updated(name, content)?;
        let mut h = self.header.clone();
        let mut bytes = frame::raw::encode_header(&mut h, &metas)?;
        if h.header_len != self.header.header_len {
            // A header ours would write at another length (another encoding
            // of the same layers, bytes after them): the content is
            // overwritten where it is stored, as C-Blosc2 does.
            let stored = self.stored_header()?;
            bytes = frame::raw::patch_meta_content(&stored, &self.header, name, content, &metas)?;
        }
        self.write_header_region(&bytes)?;
        self.metalayers = metas;
        Ok(())
    }

    /// Rewrite an empty frame with other metalayers.
    pub(super) fn rewrite_empty(&mut self, metas: Vec<Metalayer>) -> Result<()> {
        let mut h = self.header.clone();
        h.nbytes = 0;
        h.cbytes = 0;
        self.stamp(&mut h);
        let mut bytes = frame::raw::encode_header(&mut h, &metas)?;
        let trailer = frame::raw::encode_trailer(&self.vlmetalayers)?;
        h.frame_len = (bytes.len() + trailer.len()) as u64;
        bytes[..frame::HEADER_FIXED_LEN].copy_from_slice(&h.encode_fixed());
        bytes.extend_from_slice(&trailer);
        self.replace_frame(&bytes)?;
        self.header = h;
        self.metalayers = metas;
        self.offsets = Offsets::Explicit(Vec::new());
        self.space = Space::default();
        Ok(())
    }

    /// The vlmetalayers (stored compressed), in stored order.
    pub fn vlmetalayers(&self) -> &[VlMetalayer] {
        &self.vlmetalayers
    }

    /// Names of the vlmetalayers.
    pub fn vlmeta_names(&self) -> Vec<&str> {
        self.vlmetalayers.iter().map(|m| m.name.as_str()).collect()
    }

    /// The value of vlmetalayer `name`, decompressed.
    ///
    /// # Errors
    /// The chunk decoder's errors for a corrupt value.
    pub fn vlmeta_get(&mut self, name: &str) -> Result<Option<Vec<u8>>> {
        let Some(m) = self.vlmetalayers.iter().find(|m| m.name == name) else {
            return Ok(None);
        };
        let h = ChunkHeader::parse(&m.chunk)?;
        if h.cbytes != m.chunk.len() {
            return Err(corrupt(format!(
                "vlmetalayer {name:?}: chunk size mismatch"
            )));
        }
        let limit = frame::decode_limit(h.cbytes as u64);
        if h.nbytes > limit {
            return Err(corrupt(format!(
                "vlmetalayer {name:?} declares {} bytes, over the decode limit {limit}",
                h.nbytes
            )));
        }
        let chunk = frame::raw::as_in_schunk(Cow::Borrowed(&m.chunk), self.header.typesize);
        self.decompressor.decompress(&chunk).map(Some)
    }

    pub(super) fn vl_chunk(&self, value: &[u8]) -> Result<Vec<u8>> {
        // C-Blosc2's defaults (BLOSC2_CPARAMS_DEFAULTS), as blosc2_vlmeta_add uses.
        let p = CParams::default().nthreads(self.cparams.nthreads);
        crate::compress(value, &p)
    }

    /// Add vlmetalayer `name` (the value is stored compressed).
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) if it exists or a limit is hit.
    pub fn vlmeta_add(&mut self, name: &str, value: &[u8]) -> Result<()> {
        self.check_editable()?;
        frame::check_name(name)?;
        if self.vlmetalayers.iter().any(|m| m.name == name) {
            return Err(invalid_param(format!("vlmetalayer {name:?} exists")));
        }
        let mut vl = self.vlmetalayers.clone();
        vl.push(VlMetalayer {
            name: name.to_string(),
            chunk: self.vl_chunk(value)?,
        });
        self.commit_vlmeta(vl)
    }

    /// Add vlmetalayer `name` from an already compressed chunk (stored as
    /// is; for copying vlmetalayers between frames).
    ///
    /// # Errors
    /// As [`SChunk::vlmeta_add`], plus a malformed chunk.
    pub fn vlmeta_add_chunk(&mut self, name: &str, chunk: &[u8]) -> Result<()> {
        self.check_editable()?;
        frame::check_name(name)?;
        let h = ChunkHeader::parse(chunk)?;
        if h.cbytes != chunk.len() {
            return Err(invalid_param("vlmetalayer chunk size mismatch"));
        }
        if self.vlmetalayers.iter().any(|m| m.name == name) {
            return Err(invalid_param(format!("vlmetalayer {name:?} exists")));
        }
        let mut vl = self.vlmetalayers.clone();
        vl.push(VlMetalayer {
            name: name.to_string(),
            chunk: chunk.to_vec(),
        });
        self.commit_vlmeta(vl)
    }

    /// Replace the value of vlmetalayer `name`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) if it does not exist.
    pub fn vlmeta_update(&mut self, name: &str, value: &[u8]) -> Result<()> {
        self.check_editable()?;
        let chunk = self.vl_chunk(value)?;
        let mut vl = self.vlmetalayers.clone();
        let m = vl
            .iter_mut()
            .find(|m| m.name == name)
            .ok_or_else(|| invalid_param(format!("no vlmetalayer {name:?}")))?;
        m.chunk = chunk;
        self.commit_vlmeta(vl)
    }

    /// Add or replace vlmetalayer `name`.
    ///
    /// # Errors
    /// As [`SChunk::vlmeta_add`].
    pub fn vlmeta_set(&mut self, name: &str, value: &[u8]) -> Result<()> {
        if self.vlmetalayers.iter().any(|m| m.name == name) {
            self.vlmeta_update(name, value)
        } else {
            self.vlmeta_add(name, value)
        }
    }

    /// Delete vlmetalayer `name`; the later ones move down.
    ///
    /// # Errors
    /// [`Error::InvalidParam`](crate::Error::InvalidParam) if it does not exist.
    pub fn vlmeta_delete(&mut self, name: &str) -> Result<()> {
        self.check_editable()?;
        let mut vl = self.vlmetalayers.clone();
        let i = vl
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| invalid_param(format!("no vlmetalayer {name:?}")))?;
        vl.remove(i);
        self.commit_vlmeta(vl)
    }

    /// Store `vl` as the vlmetalayers: one commit of the trailer alone (the
    /// chunks and the index stay).
    fn commit_vlmeta(&mut self, vl: Vec<VlMetalayer>) -> Result<()> {
        self.commit(
            self.header.clone(),
            Vec::<Vec<u8>>::new(),
            |_| Ok(None),
            MetaChange {
                vlmeta: Some(vl),
                metas: None,
            },
            Vec::new(),
            Tail::Auto,
        )
    }
}
