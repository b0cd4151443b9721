//! `kernels`: our shuffle kernels against C-Blosc2's, one call over one
//! buffer at a time.
//!
//! For every kernel x typesize x buffer size the contestants are: our best
//! implementation, C-Blosc2's run-time dispatch, C-Blosc2's implementation of
//! the same instruction set as our best (when that is different code from
//! what C dispatches to), our generic Rust, C's generic C, and `memcpy` of
//! the same buffer as the ceiling; those C columns are the static C-Blosc2
//! 2.15 of `blosc2-sys`, whose code for each instruction set can be called
//! on its own. When a C-Blosc2 3.x library is loaded (`--c-lib`, or
//! python-blosc2's by default) its exported `blosc2_shuffle` & co. are one
//! more contestant: the current C-Blosc2, the baseline that counts. Before
//! timing, every output is compared with C-Blosc2's.

use std::hint::black_box;
use std::path::PathBuf;

use oxiblosc_kernels::{Isa, Kernels};

use crate::c::{CIsa, CKernels, DynKernels};
use crate::table::Table;
use crate::timing::{self, Config, Contestant, Sample};

/// One of the four kernels C-Blosc2 also has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Byte shuffle.
    Shuffle,
    /// Byte unshuffle.
    Unshuffle,
    /// Bit shuffle.
    Bitshuffle,
    /// Bit unshuffle.
    Bitunshuffle,
}

impl Kernel {
    /// All four, in table order.
    pub const ALL: [Kernel; 4] = [
        Kernel::Shuffle,
        Kernel::Unshuffle,
        Kernel::Bitshuffle,
        Kernel::Bitunshuffle,
    ];

    /// The name used on the command line and in the table.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Shuffle => "shuffle",
            Kernel::Unshuffle => "unshuffle",
            Kernel::Bitshuffle => "bitshuffle",
            Kernel::Bitunshuffle => "bitunshuffle",
        }
    }

    /// Parses [`Kernel::name`].
    pub fn parse(s: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == s)
    }

    fn index(self) -> usize {
        self as usize
    }

    /// For an inverse kernel, the forward one that makes its input.
    fn forward(self) -> Option<Kernel> {
        match self {
            Kernel::Unshuffle => Some(Kernel::Shuffle),
            Kernel::Bitunshuffle => Some(Kernel::Bitshuffle),
            _ => None,
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Rounds and round length.
    pub timing: Config,
    /// Kernels, in order.
    pub kernels: Vec<Kernel>,
    /// Element sizes in bytes.
    pub typesizes: Vec<usize>,
    /// Buffer sizes in bytes.
    pub sizes: Vec<usize>,
    /// Where to write the CSV (`None`: don't).
    pub csv: Option<PathBuf>,
}

impl Options {
    /// Every kernel, typesizes 1, 2, 4, 8, 16, sizes 32 KiB, 256 KiB, 8 MiB;
    /// no CSV.
    pub fn new(timing: Config) -> Self {
        Options {
            timing,
            kernels: Kernel::ALL.to_vec(),
            typesizes: vec![1, 2, 4, 8, 16],
            sizes: vec![32 << 10, 256 << 10, 8 << 20],
            csv: None,
        }
    }
}

/// Something that can run a kernel.
#[derive(Clone, Copy, Debug)]
enum Impl {
    Ours(&'static Kernels),
    C(CKernels),
    /// The exported helpers of a loaded C-Blosc2 3.x.
    CDyn(DynKernels),
    Memcpy,
}

impl Impl {
    fn label(self) -> String {
        match self {
            Impl::Ours(k) => format!("ours {}", k.isa().name()),
            Impl::C(c) => format!("C {}", c.label()),
            Impl::CDyn(c) => c.label(),
            Impl::Memcpy => "memcpy".to_owned(),
        }
    }

    fn run(self, kernel: Kernel, ts: usize, src: &[u8], dst: &mut [u8]) -> Result<(), String> {
        match self {
            Impl::Ours(k) => match kernel {
                Kernel::Shuffle => k.shuffle(ts, src, dst),
                Kernel::Unshuffle => k.unshuffle(ts, src, dst),
                Kernel::Bitshuffle => k.bitshuffle(ts, src, dst),
                Kernel::Bitunshuffle => k.bitunshuffle(ts, src, dst),
            }
            .map_err(|e| e.to_string()),
            Impl::C(c) => match kernel {
                Kernel::Shuffle => c.shuffle(ts, src, dst),
                Kernel::Unshuffle => c.unshuffle(ts, src, dst),
                Kernel::Bitshuffle => c.bitshuffle(ts, src, dst),
                Kernel::Bitunshuffle => c.bitunshuffle(ts, src, dst),
            }
            .map_err(|e| e.to_string()),
            Impl::CDyn(c) => match kernel {
                Kernel::Shuffle => c.shuffle(ts, src, dst),
                Kernel::Unshuffle => c.unshuffle(ts, src, dst),
                Kernel::Bitshuffle => c.bitshuffle(ts, src, dst),
                Kernel::Bitunshuffle => c.bitunshuffle(ts, src, dst),
            }
            .map_err(|e| e.to_string()),
            Impl::Memcpy => {
                dst.copy_from_slice(src);
                Ok(())
            }
        }
    }
}

/// A realistic input: float64 samples of a slow ramp with a little noise
/// (what a sensor or simulation would store), as little-endian bytes.
pub fn make_data(len: usize) -> Vec<u8> {
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut out = Vec::with_capacity(len + 8);
    let mut i = 0u64;
    while out.len() < len {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let noise = (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
        let v = 250.0 + i as f64 * 0.0125 + noise * 0.01;
        out.extend_from_slice(&v.to_le_bytes());
        i += 1;
    }
    out.truncate(len);
    out
}

/// `32 KiB`, `8 MiB`.
pub fn size_label(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else if bytes >= 1 << 10 && bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", bytes >> 10)
    } else {
        format!("{bytes} B")
    }
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// The columns of one row: throughputs in GB/s, ratios (above 1: ours is
/// faster) as medians of per-round ratios.
struct Row {
    kernel: Kernel,
    typesize: usize,
    size: usize,
    ours_best: f64,
    c_best: f64,
    ratio_best: f64,
    c_same: f64,
    ratio_same: f64,
    ours_generic: f64,
    c_generic: f64,
    ratio_generic: f64,
    memcpy: f64,
    /// The loaded C-Blosc2 3.x: its GB/s and ours/it.
    c_new: Option<(f64, f64)>,
    spread: f64,
    ok: bool,
}

/// Runs the comparison, prints the markdown table to stdout and writes the
/// CSV. Returns whether every output matched C-Blosc2's.
///
/// # Errors
/// A kernel that rejects its arguments, or the CSV cannot be written.
pub fn run(opts: &Options) -> Result<bool, String> {
    let ours_best = Kernels::best();
    let ours_generic = Kernels::get(Isa::Generic).ok_or("no generic kernels")?;
    let c_best = CKernels::dispatch();
    let c_generic = CKernels::get(CIsa::Generic).ok_or("no generic C kernels")?;
    // C's code for our best instruction set, to compare like with like.
    let c_same = CIsa::matching(ours_best.isa())
        .and_then(CKernels::get)
        .unwrap_or(c_best);
    let c_new = crate::c::loaded_kernels();

    let max = opts.sizes.iter().copied().max().unwrap_or(0);
    let orig = make_data(max);
    let mut input = vec![0u8; max];
    // A destination buffer per contestant (at most seven), touched once so
    // no page faults are timed.
    let mut pool: Vec<Vec<u8>> = (0..7).map(|_| vec![1u8; max]).collect();

    let cases = opts.kernels.len() * opts.typesizes.len() * opts.sizes.len();
    let mut rows = Vec::with_capacity(cases);
    let mut n = 0;
    let mut all_ok = true;
    for &kernel in &opts.kernels {
        for &ts in &opts.typesizes {
            for &size in &opts.sizes {
                n += 1;
                let orig = &orig[..size];
                let src: &[u8] = match kernel.forward() {
                    Some(fwd) => {
                        Impl::C(c_best).run(fwd, ts, orig, &mut input[..size])?;
                        &input[..size]
                    }
                    None => orig,
                };
                // C's own ISA column only when it is different code from C's dispatch.
                let same_is_best = c_same.function_address(kernel.index())
                    == c_best.function_address(kernel.index());
                let mut impls = vec![
                    Impl::Ours(ours_best),
                    Impl::C(c_best),
                    Impl::Ours(ours_generic),
                    Impl::C(c_generic),
                    Impl::Memcpy,
                ];
                if !same_is_best {
                    impls.push(Impl::C(c_same));
                }
                let new_at = impls.len();
                if let Some(k) = c_new {
                    impls.push(Impl::CDyn(k));
                }

                // Check every output against C-Blosc2's dispatch (and, for the
                // inverse kernels, against the original data).
                let mut reference = vec![0u8; size];
                Impl::C(c_best).run(kernel, ts, src, &mut reference)?;
                let mut ok = true;
                if kernel.forward().is_some() && reference != orig {
                    eprintln!(
                        "ERROR: {} ts={ts} {}: C-Blosc2 does not restore the original",
                        kernel.name(),
                        size_label(size)
                    );
                    ok = false;
                }
                for &imp in impls.iter().filter(|i| !matches!(i, Impl::Memcpy)) {
                    let dst = &mut pool[0][..size];
                    imp.run(kernel, ts, src, dst)?;
                    if let Some(at) = first_difference(dst, &reference) {
                        eprintln!(
                            "ERROR: {} ts={ts} {}: {} output differs from C-Blosc2's \
                             (first difference at byte {at} of {size})",
                            kernel.name(),
                            size_label(size),
                            imp.label()
                        );
                        ok = false;
                    }
                }
                all_ok &= ok;

                let samples: Vec<Sample> = {
                    let mut contestants: Vec<Contestant<'_>> = impls
                        .iter()
                        .zip(pool.iter_mut())
                        .map(|(&imp, buf)| {
                            let dst = &mut buf[..size];
                            Contestant::new(move || {
                                let r = imp.run(kernel, ts, black_box(src), black_box(&mut *dst));
                                black_box(&dst);
                                r.expect("kernel failed after a successful check run");
                            })
                        })
                        .collect();
                    timing::measure(&opts.timing, &mut contestants)
                };
                let gb = |i: usize| samples[i].gbps(size);
                let same = if same_is_best { 1 } else { 5 };
                let row = Row {
                    kernel,
                    typesize: ts,
                    size,
                    ours_best: gb(0),
                    c_best: gb(1),
                    ratio_best: samples[0].speedup_over(&samples[1]),
                    c_same: gb(same),
                    ratio_same: samples[0].speedup_over(&samples[same]),
                    ours_generic: gb(2),
                    c_generic: gb(3),
                    ratio_generic: samples[2].speedup_over(&samples[3]),
                    memcpy: gb(4),
                    c_new: c_new
                        .is_some()
                        .then(|| (gb(new_at), samples[0].speedup_over(&samples[new_at]))),
                    spread: samples.iter().map(Sample::spread).fold(0.0, f64::max),
                    ok,
                };
                let new = row.c_new.map_or_else(String::new, |(g, r)| {
                    format!(
                        " | {} {g:.2} GB/s ({r:.2}x)",
                        c_new.map_or_else(String::new, |k| k.label())
                    )
                });
                eprintln!(
                    "[{n:>2}/{cases}] {:<12} ts={ts:<2} {:>7}: ours {:.2} | C {:.2} GB/s ({:.2}x){new} \
                     | generic ours {:.2} | C {:.2} | memcpy {:.2}{}",
                    kernel.name(),
                    size_label(size),
                    row.ours_best,
                    row.c_best,
                    row.ratio_best,
                    row.ours_generic,
                    row.c_generic,
                    row.memcpy,
                    if ok { "" } else { "  MISMATCH" }
                );
                rows.push(row);
            }
        }
    }

    let ours = ours_best.isa().name();
    let cb = c_best.label();
    let cs = c_same.label();
    let cv = crate::c::version();
    let mut header = vec![
        "kernel".to_owned(),
        "typesize".to_owned(),
        "size".to_owned(),
        format!("ours {ours}"),
    ];
    if let Some(k) = c_new {
        header.push(k.label());
        header.push(format!("ours/{}", k.label()));
    }
    header.extend([
        format!("C {cv} {cb}"),
        format!("ours/C {cv}"),
        format!("C {cv} {cs}"),
        format!("ours/C {cv} {cs}"),
        "ours generic".to_owned(),
        format!("C {cv} generic"),
        "ours/C generic".to_owned(),
        "memcpy".to_owned(),
        "spread".to_owned(),
        "check".to_owned(),
    ]);
    let mut md = Table::new(header.clone());
    let mut csv = Table::new(header.iter().map(|h| match h.as_str() {
        "size" => "size_bytes".to_owned(),
        "spread" => "spread_pct".to_owned(),
        h => h.to_owned(),
    }));
    let g = |v: f64| format!("{v:.2}");
    for row in &rows {
        let cells = |size: String, spread: String| {
            let mut v = vec![
                row.kernel.name().to_owned(),
                row.typesize.to_string(),
                size,
                g(row.ours_best),
            ];
            if let Some((gbps, ratio)) = row.c_new {
                v.push(g(gbps));
                v.push(g(ratio));
            }
            v.extend([
                g(row.c_best),
                g(row.ratio_best),
                g(row.c_same),
                g(row.ratio_same),
                g(row.ours_generic),
                g(row.c_generic),
                g(row.ratio_generic),
                g(row.memcpy),
                spread,
                if row.ok { "ok" } else { "MISMATCH" }.to_owned(),
            ]);
            v
        };
        md.push(cells(
            size_label(row.size),
            format!("{:.0}%", row.spread * 100.0),
        ));
        csv.push(cells(
            row.size.to_string(),
            format!("{:.1}", row.spread * 100.0),
        ));
    }
    println!();
    println!(
        "GB/s = 10^9 bytes of input per second, median of {} interleaved rounds of >= {} ms each \
         ({} time);",
        opts.timing.rounds,
        opts.timing.target.as_millis(),
        match opts.timing.clock {
            timing::Clock::ThreadCpu => "thread CPU",
            timing::Clock::Wall => "wall",
        }
    );
    println!(
        "ours/C = median over the rounds of C's time / ours in the same round (> 1: ours is faster);"
    );
    println!("spread = (slowest - fastest round) / median, of the noisiest contestant of the row.");
    println!();
    print!("{}", md.markdown());
    if let Some(path) = &opts.csv {
        csv.write_csv(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("\nCSV written to {}", path.display());
    }
    Ok(all_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_has_the_requested_length_and_varies() {
        let d = make_data(1003);
        assert_eq!(d.len(), 1003);
        assert_ne!(d[..8], d[8..16]);
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(32 << 10), "32 KiB");
        assert_eq!(size_label(8 << 20), "8 MiB");
        assert_eq!(size_label(1000), "1000 B");
        assert_eq!(Kernel::parse("bitunshuffle"), Some(Kernel::Bitunshuffle));
    }

    /// Our kernels and C-Blosc2's agree byte for byte on a few shapes,
    /// including sizes that are not a multiple of 8 elements.
    #[test]
    fn ours_matches_c() {
        let data = make_data(4099);
        let impls = [
            Impl::Ours(Kernels::best()),
            Impl::Ours(Kernels::get(Isa::Generic).unwrap()),
            Impl::C(CKernels::get(CIsa::Generic).unwrap()),
        ];
        for kernel in Kernel::ALL {
            for ts in [1, 2, 3, 4, 8, 16, 24] {
                for len in [0, 7, 64, 1000, 4099] {
                    let src = &data[..len];
                    let mut want = vec![0; len];
                    Impl::C(CKernels::dispatch())
                        .run(kernel, ts, src, &mut want)
                        .unwrap();
                    for imp in impls {
                        let mut got = vec![0; len];
                        imp.run(kernel, ts, src, &mut got).unwrap();
                        assert_eq!(
                            got,
                            want,
                            "{} ts={ts} len={len} {}",
                            kernel.name(),
                            imp.label()
                        );
                    }
                }
            }
        }
    }
}
