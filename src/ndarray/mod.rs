//! NDArrays (C-Blosc2's `b2nd`, python-blosc2's `NDArray`) and NumPy
//! `.npy` files.
//!
//! An NDArray is a super-chunk whose `b2nd` metalayer (`caterva` in older
//! files) gives the array's shape, chunk shape, block shape and dtype
//! ([`NdMeta`]). The array is cut into equal chunks, each cut into equal
//! blocks, both padded at the array's edges ([`Layout`]). [`NdArray`]
//! reassembles the logical C-order array; [`create`] (or [`builder`] and
//! [`fill`] or [`fill_from`]) writes one; [`npy`] reads and writes `.npy` headers.
//!
//! One file per concern: `meta.rs` (the metalayer), `layout.rs` (geometry
//! and index math), `walk.rs` (the walks over a chunk's items), `read.rs`
//! ([`NdArray`]), `write.rs` (building one),
//! `npy.rs` (`.npy` headers and dtype sizes), `slice.rs` (reading and
//! writing boxes), `reshape.rs` (resizing, inserting, appending and
//! concatenating along an axis), `dims.rs` (dimensions of length 1 added
//! or removed), `buffer.rs` (boxes copied between C-order buffers),
//! `select.rs` (selections of items: sparse gathers and orthogonal
//! selections).

mod buffer;
mod chunkbuf;
mod chunkwise;
mod dims;
mod fill;
mod layout;
mod meta;
pub mod npy;
mod read;
mod reshape;
mod select;
mod slice;
mod walk;
mod write;

pub use buffer::{box_bytes, copy_box};
pub use chunkwise::{insert_keep_chunks, resize_keep_chunks};
pub use dims::{same_chunks, with_dims, with_dims_in};
pub use layout::Layout;
pub use meta::{
    B2ND_META, CATERVA_META, DEFAULT_DTYPE, MAX_DIM, MAX_DTYPE_LEN, META_VERSION, NdMeta,
};
pub use npy::{NpyHeader, dtype_itemsize, npy_itemsize};
pub use read::{MAX_SLAB_BYTES, NdArray, find_meta, is_ndarray};
pub use reshape::{MAX_RESIZE_CHUNKS, append, concatenate, insert, resize};
pub use select::{get_items, get_orthogonal, set_orthogonal};
pub use slice::{get_slice, layout_of, set_slice};
pub use write::{
    DEFAULT_BLOCK_BYTES, DEFAULT_CHUNK_BYTES, builder, create, default_shapes, fill, fill_from,
};
