//! The filter pipeline over the kernels: forward (slot 0 to 5) before the
//! codec, backward (slot 5 to 0) after it.
//!
//! Filters map a block to a block of the same size. Forward runs ping-pong
//! between two scratch buffers (or returns the input untouched when there is
//! no filter); backward makes the last inverse filter write straight into the
//! caller's output slice, so a decoded block is never copied once more.

use oxiblosc_kernels::Kernels;

use crate::error::{Error, Result};

/// Filter ids (CHUNK-NOTES §4.1, §4.6).
pub(crate) mod id {
    pub const NOFILTER: u8 = 0;
    pub const SHUFFLE: u8 = 1;
    pub const BITSHUFFLE: u8 = 2;
    pub const DELTA: u8 = 3;
    pub const TRUNC_PREC: u8 = 4;
    pub const BYTEDELTA: u8 = 35;
    pub const INT_TRUNC: u8 = 36;
}

/// What undoing a chunk's filters takes ([`Undo::of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Undo {
    /// Nothing: the slots are empty or only encode (TRUNC_PREC, INT_TRUNC),
    /// and the streams decode straight into the output.
    Nothing,
    /// One byte shuffle of elements of this size, and nothing else.
    Unshuffle(usize),
    /// Anything else: [`Pipeline::backward`].
    Pipeline,
}

impl Undo {
    /// What undoing the pipeline of a header's bytes 16..32 (`slots`, read
    /// as a little-endian word: the bytes [`Pipeline::from_slots`] takes)
    /// takes, for items of `typesize` bytes; worked out once a chunk (the
    /// decoder asked per block, walking the six slots each time: ~2 % of a
    /// 4 KiB chunk's decode). From the header's word, in registers: a
    /// pipeline built first to be asked was moved after with wide loads of
    /// its narrow stores, and the bytes put in memory to be walked were
    /// read back by the pipeline's 16-byte move; both store-forwarding
    /// stalls (perf/README.md, session 23).
    #[inline(always)]
    pub(crate) fn of(slots: u128, typesize: usize) -> Undo {
        // The two pipelines C-Blosc2 writes most (none, and its default:
        // SHUFFLE in slot 5) tested as one word.
        let ids = slots as u64 & 0xFFFF_FFFF_FFFF;
        if ids == 0 {
            return Undo::Nothing;
        }
        if ids == u64::from(id::SHUFFLE) << 40 {
            return Undo::Unshuffle(match (slots >> (13 * 8)) as u8 {
                0 => typesize,
                m => usize::from(m),
            });
        }
        Undo::of_any(slots, typesize)
    }

    /// [`Undo::of`] for the other pipelines, out of line.
    #[inline(never)]
    fn of_any(slots: u128, typesize: usize) -> Undo {
        let slots = slots.to_le_bytes();
        let elem_size = |s: usize| match slots[8 + s] {
            0 => typesize,
            m => usize::from(m),
        };
        let mut undo = Undo::Nothing;
        for (s, &f) in slots[..6].iter().enumerate() {
            match f {
                id::NOFILTER | id::TRUNC_PREC | id::INT_TRUNC => {}
                id::SHUFFLE if undo == Undo::Nothing => undo = Undo::Unshuffle(elem_size(s)),
                _ => return Undo::Pipeline,
            }
        }
        undo
    }
}

/// The six filter slots of a chunk and what the filters need to know.
#[derive(Clone, Debug)]
pub(crate) struct Pipeline<'c> {
    /// Bytes 16..32 of a Blosc2 header: the filter ids in 0..6, their metas
    /// in 8..14 (the other bytes are not read). Held as the header holds
    /// them so the decoder stores them with one wide store: stored as two
    /// 6-byte arrays, each became a 4- and a 2-byte store that the wide
    /// loads after (`contains`, moves of the plan) waited on, a
    /// store-forwarding stall (perf/README.md, session 22).
    slots: [u8; 16],
    /// The type size the filters use (the stored, capped one).
    pub typesize: usize,
    /// Chunk format version 2 (C-Blosc 1.x): its bitshuffle rule differs.
    pub blosc1_bitshuffle: bool,
    /// Handed to user filters (`CParams::context` / `DParams::context`);
    /// borrowed, not cloned: a clone and its drop were two atomic
    /// operations on every chunk coded through a super-chunk, whose
    /// parameters carry one (perf/README.md, session 23).
    pub context: Option<&'c crate::plugins::CallContext>,
}

impl<'c> Pipeline<'c> {
    /// The pipeline of filter ids `ids` with metas `metas`.
    pub(crate) fn new(
        ids: [u8; 6],
        metas: [u8; 6],
        typesize: usize,
        blosc1_bitshuffle: bool,
        context: Option<&'c crate::plugins::CallContext>,
    ) -> Pipeline<'c> {
        let mut slots = [0u8; 16];
        slots[..6].copy_from_slice(&ids);
        slots[8..14].copy_from_slice(&metas);
        Pipeline::from_slots(slots, typesize, blosc1_bitshuffle, context)
    }

    /// The pipeline of a header's bytes 16..32 (ids in 0..6, metas in
    /// 8..14; the other bytes are ignored).
    #[inline(always)]
    pub(crate) fn from_slots(
        slots: [u8; 16],
        typesize: usize,
        blosc1_bitshuffle: bool,
        context: Option<&'c crate::plugins::CallContext>,
    ) -> Pipeline<'c> {
        Pipeline {
            slots,
            typesize,
            blosc1_bitshuffle,
            context,
        }
    }

    /// The filter id of each slot.
    #[inline(always)]
    pub(crate) fn ids(&self) -> &[u8; 6] {
        self.slots[..6].try_into().unwrap()
    }

    /// The meta byte of each slot.
    #[inline(always)]
    fn metas(&self) -> &[u8; 6] {
        self.slots[8..14].try_into().unwrap()
    }

    /// Slots that do something when decoding.
    fn backward_slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..6)
            .rev()
            .filter(|&s| !matches!(self.ids()[s], id::NOFILTER | id::TRUNC_PREC | id::INT_TRUNC))
    }

    fn forward_slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..6).filter(|&s| self.ids()[s] != id::NOFILTER)
    }

    /// When undoing the pipeline is one shuffle alone (other slots empty or
    /// encode-only): whether it shuffles bits, and its element size.
    pub(crate) fn only_transpose(&self) -> Option<(bool, usize)> {
        let mut slots = self.backward_slots();
        let s = slots.next()?;
        if slots.next().is_some() {
            return None;
        }
        match self.ids()[s] {
            id::SHUFFLE => Some((false, self.elem_size(s))),
            id::BITSHUFFLE => Some((true, self.typesize)),
            _ => None,
        }
    }

    /// Whether bit shuffles follow C-Blosc 1.x's rule (format version 2):
    /// a buffer whose element count is not a multiple of 8 is stored as is.
    pub(crate) fn blosc1_bitshuffle(&self) -> bool {
        self.blosc1_bitshuffle
    }

    /// Whether any slot is DELTA (blocks after the first need block 0).
    pub(crate) fn has_delta(&self) -> bool {
        self.ids().contains(&id::DELTA)
    }

    /// Check that every filter can be undone by this build.
    // The built-in filters are checked inline: out of line, the caller read
    // back the `Result` this returned through memory, a store-forwarding
    // stall on every chunk decoded (perf/README.md, session 22).
    #[inline]
    pub(crate) fn check_decodable(&self) -> Result<()> {
        let builtin = |f: u8| {
            matches!(
                f,
                id::NOFILTER
                    | id::SHUFFLE
                    | id::BITSHUFFLE
                    | id::DELTA
                    | id::TRUNC_PREC
                    | id::BYTEDELTA
                    | id::INT_TRUNC
            )
        };
        if self.ids().iter().all(|&f| builtin(f)) {
            return Ok(());
        }
        self.check_user_filters(builtin)
    }

    /// [`Pipeline::check_decodable`] when a slot holds no built-in filter.
    #[cold]
    fn check_user_filters(&self, builtin: impl Fn(u8) -> bool) -> Result<()> {
        for (s, &f) in self.ids().iter().enumerate() {
            if !builtin(f) && crate::plugins::user_filter(f).is_none() {
                return Err(Error::Unsupported(format!(
                    "filter id {f} in slot {s} is not supported"
                )));
            }
        }
        Ok(())
    }

    fn elem_size(&self, slot: usize) -> usize {
        match self.metas()[slot] {
            0 => self.typesize,
            m => usize::from(m),
        }
    }

    fn apply(
        &self,
        k: &Kernels,
        slot: usize,
        forward: bool,
        reference: Option<&[u8]>,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<()> {
        let ts = self.typesize;
        match (self.ids()[slot], forward) {
            (id::SHUFFLE, true) => k.shuffle(self.elem_size(slot), src, dst)?,
            (id::SHUFFLE, false) => k.unshuffle(self.elem_size(slot), src, dst)?,
            (id::BITSHUFFLE, true) if self.blosc1_bitshuffle => {
                k.bitshuffle_blosc1(ts, src, dst)?
            }
            (id::BITSHUFFLE, false) if self.blosc1_bitshuffle => {
                k.bitunshuffle_blosc1(ts, src, dst)?
            }
            (id::BITSHUFFLE, true) => k.bitshuffle(ts, src, dst)?,
            (id::BITSHUFFLE, false) => k.bitunshuffle(ts, src, dst)?,
            (id::DELTA, true) => k.delta_encode(ts, reference, src, dst)?,
            (id::DELTA, false) => k.delta_decode(ts, reference, src, dst)?,
            (id::TRUNC_PREC, true) => k.trunc_prec(ts, self.metas()[slot] as i8, src, dst)?,
            (id::BYTEDELTA, true) => k.bytedelta_encode(self.elem_size(slot), src, dst)?,
            (id::BYTEDELTA, false) => k.bytedelta_decode(self.elem_size(slot), src, dst)?,
            (other, forward) if crate::plugins::USER_FILTER_IDS.contains(&other) => {
                let f = crate::plugins::user_filter(other).ok_or_else(|| {
                    Error::Unsupported(format!("user filter {other} is not registered"))
                })?;
                let call = crate::plugins::FilterCall {
                    id: other,
                    meta: self.metas()[slot],
                    typesize: ts,
                    context: self.context.cloned(),
                };
                if forward {
                    f.forward(src, dst, &call)?
                } else {
                    f.backward(src, dst, &call)?
                }
            }
            (other, _) => {
                return Err(Error::Unsupported(format!(
                    "filter id {other} in slot {slot}"
                )));
            }
        }
        Ok(())
    }

    /// Run the filters forward on `block`. `reference` is block 0 of the
    /// unfiltered input for blocks after the first (DELTA), `None` for block
    /// 0. Returns the filtered block: `block` itself when there is nothing
    /// to do, else one of the scratch buffers (each at least `block.len()`).
    pub(crate) fn forward<'a>(
        &self,
        k: &Kernels,
        block: &'a [u8],
        reference: Option<&[u8]>,
        a: &'a mut [u8],
        b: &'a mut [u8],
    ) -> Result<&'a [u8]> {
        let n = block.len();
        let mut bufs = [&mut a[..n], &mut b[..n]];
        let mut cur: Option<usize> = None; // which scratch holds the data
        for slot in self.forward_slots() {
            // A byte shuffle of 1-byte elements leaves the bytes as they
            // are: no copy (the header still names it, as C writes it).
            if self.ids()[slot] == id::SHUFFLE && self.elem_size(slot) == 1 {
                continue;
            }
            let out = match cur {
                None => 0,
                Some(i) => 1 - i,
            };
            let (first, second) = bufs.split_at_mut(1);
            let (src, dst): (&[u8], &mut [u8]) = match (cur, out) {
                (None, _) => (block, &mut *first[0]),
                (Some(0), _) => (&*first[0], &mut *second[0]),
                _ => (&*second[0], &mut *first[0]),
            };
            let reference = reference.map(|r| &r[..n]);
            self.apply(k, slot, true, reference, src, dst)?;
            cur = Some(out);
        }
        Ok(match cur {
            None => block,
            Some(i) => {
                let [x, y] = bufs;
                if i == 0 { x } else { y }
            }
        })
    }

    /// Undo the filters of one block: `input` holds the decoded streams (and
    /// may be used as scratch), `spare` is a second scratch of at least the
    /// same size, `out` receives the result. `reference` is block 0 of the
    /// decoded output for blocks after the first, `None` for block 0.
    pub(crate) fn backward(
        &self,
        k: &Kernels,
        input: &mut [u8],
        spare: &mut [u8],
        reference: Option<&[u8]>,
        out: &mut [u8],
    ) -> Result<()> {
        let n = out.len();
        let mut slot_buf = [0usize; 6];
        let mut nslots = 0;
        for s in self.backward_slots() {
            slot_buf[nslots] = s;
            nslots += 1;
        }
        let slots = &slot_buf[..nslots];
        if slots.is_empty() {
            out.copy_from_slice(&input[..n]);
            return Ok(());
        }
        let reference = reference.map(|r| &r[..n]);
        let mut bufs = [&mut input[..n], &mut spare[..n]];
        let mut cur = 0usize;
        for (i, &slot) in slots.iter().enumerate() {
            let (first, second) = bufs.split_at_mut(1);
            let (src, other): (&[u8], &mut [u8]) = if cur == 0 {
                (&*first[0], &mut *second[0])
            } else {
                (&*second[0], &mut *first[0])
            };
            if i + 1 == slots.len() {
                self.apply(k, slot, false, reference, src, out)?;
            } else {
                self.apply(k, slot, false, reference, src, other)?;
                cur = 1 - cur;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Undo::of` (its one-word shortcuts and the walk) against the
    /// pipeline's own backward slots, for every pipeline of six slots drawn
    /// from the ids that matter (none, the encode-only ones, shuffle, others)
    /// with element-size metas.
    #[test]
    fn undo_agrees_with_the_backward_slots() {
        let ids = [
            id::NOFILTER,
            id::SHUFFLE,
            id::BITSHUFFLE,
            id::DELTA,
            id::TRUNC_PREC,
            id::INT_TRUNC,
            id::BYTEDELTA,
        ];
        let mut checked = 0;
        for code in 0..ids.len().pow(6) {
            let mut c = code;
            let mut slots = [0u8; 16];
            for s in 0..6 {
                slots[s] = ids[c % ids.len()];
                c /= ids.len();
                // A meta on some slots: the element size of a shuffle there.
                slots[8 + s] = if (code + s) % 3 == 0 {
                    0
                } else {
                    (s as u8) + 2
                };
            }
            let p = Pipeline::from_slots(slots, 8, false, None);
            let backward: Vec<usize> = p.backward_slots().collect();
            let expected = match backward.as_slice() {
                [] => Undo::Nothing,
                [s] if p.ids()[*s] == id::SHUFFLE => Undo::Unshuffle(p.elem_size(*s)),
                _ => Undo::Pipeline,
            };
            assert_eq!(
                Undo::of(u128::from_le_bytes(slots), 8),
                expected,
                "{slots:?}"
            );
            checked += 1;
        }
        assert_eq!(checked, 117_649);
        // The two shortcuts, with the bytes 6, 7 and 14, 15 (codec, flags)
        // set: they are not filter slots.
        let mut slots = [0u8; 16];
        slots[6..8].copy_from_slice(&[0x21, 0x7F]);
        slots[14..16].copy_from_slice(&[0x80, 0xFF]);
        assert_eq!(Undo::of(u128::from_le_bytes(slots), 4), Undo::Nothing);
        slots[5] = id::SHUFFLE;
        assert_eq!(Undo::of(u128::from_le_bytes(slots), 4), Undo::Unshuffle(4));
        slots[13] = 2;
        assert_eq!(Undo::of(u128::from_le_bytes(slots), 4), Undo::Unshuffle(2));
    }
}
