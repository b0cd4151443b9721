//! NDArrays: the b2nd/caterva metalayer decoder, `.npy` headers, and a
//! contiguous frame opened as an NDArray then read whole (bounded by
//! `MAX_OUTPUT`) and as `.npy`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::ndarray::{self, NdArray, NdMeta};
use oxiblosc::schunk::OpenOptions;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    // The metalayer alone: what decodes must encode and decode the same.
    if let Ok(m) = NdMeta::decode(data) {
        if let Ok(b) = m.encode() {
            let again = NdMeta::decode(&b).expect("an encoded metalayer decodes");
            assert_eq!(again.shape, m.shape);
        }
    }
    let _ = ndarray::npy::read_header(data);
    let Ok(mut sc) = OpenOptions::new()
        .read_only(true)
        .from_cframe(data.to_vec())
    else {
        return;
    };
    sc.set_dparams(common::dparams(1));
    let Ok(mut a) = NdArray::open(sc) else { return };
    if a.nbytes() > common::MAX_OUTPUT as u64 {
        return;
    }
    if let Ok(v) = a.to_vec() {
        assert_eq!(v.len() as u64, a.nbytes(), "to_vec against nbytes");
        let mut npy = Vec::new();
        if a.write_npy(&mut npy).is_ok() {
            assert!(npy.len() as u64 >= a.nbytes(), ".npy shorter than its data");
        }
    }
});
