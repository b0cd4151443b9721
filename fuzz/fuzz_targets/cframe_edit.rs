//! Edits on an opened fuzzed frame: the first bytes choose a few edits
//! (append / insert / update / delete / reorder / vlmeta / meta), the rest is
//! the frame. After each edit, whether it worked or not, the frame must
//! reopen.
#![no_main]
use libfuzzer_sys::fuzz_target;
use oxiblosc::CParams;
use oxiblosc::schunk::SChunk;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (ops, frame) = data.split_at(4);
    let Ok(mut sc) = SChunk::from_cframe(frame.to_vec()) else {
        return;
    };
    sc.set_dparams(common::dparams(1));
    for (k, &op) in ops.iter().enumerate() {
        let n = sc.nchunks();
        let at = usize::from(op >> 3) % (n + 1);
        let size = 1 + usize::from(op) * 7;
        let buf: Vec<u8> = (0..size).map(|i| (i * 31 + k) as u8).collect();
        let chunk = oxiblosc::compress(&buf, &CParams::default().typesize(1));
        let _ = match op & 7 {
            0 => sc.append_buffer(&buf).map(|_| ()),
            1 => chunk.and_then(|c| sc.insert_chunk(at, &c)),
            2 => chunk.and_then(|c| sc.update_chunk(at, &c)),
            3 => sc.delete_chunk(at),
            4 => {
                let order: Vec<usize> = (0..n).rev().collect();
                sc.reorder_chunks(&order)
            }
            5 => sc.vlmeta_set("fz", &buf),
            6 => sc.set_slice(0, &buf[..buf.len().min(sc.nbytes() as usize)]),
            _ => sc.compact(),
        };
        common::must_reopen(&mut sc, &format!("after op {op}"));
    }
    common::read_all(&mut sc);
});
