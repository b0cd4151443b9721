//! `oxiblosc bench`: compress one dataset (a file, or generated realistic
//! data) over a grid of codecs, levels and filters; print the compression
//! ratio and the compress / decompress speed of each cell, and optionally
//! plot them as an SVG.
//!
//! Each cell compresses the dataset chunk by chunk with one `Compressor`,
//! then decompresses it with one `Decompressor`, as many times as its share
//! of `--time-budget` allows (at least once each way); the speed is the
//! best repetition's (the least disturbed by other work on the machine).
//! The first decompression of each cell is compared with the input: a cell
//! that does not give the input back is an error, not a row.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use super::*;

/// Arguments of `oxiblosc bench`.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// Codecs to try, comma-separated (default: every codec this build can
    /// compress with).
    #[arg(long, value_name = "CODEC,...", value_delimiter = ',', value_parser = codec_parser())]
    pub(crate) codecs: Vec<Codec>,

    /// Compression levels to try, comma-separated (0 stores).
    #[arg(long, value_name = "CLEVEL,...", value_delimiter = ',', default_value = "1,5,9",
          value_parser = clap::value_parser!(u8).range(0..=9))]
    pub(crate) levels: Vec<u8>,

    /// Filters to try, one per cell, comma-separated: none, shuffle,
    /// bitshuffle, delta or bytedelta (not the lossy trunc_prec: every cell
    /// must give the input back).
    #[arg(long, value_name = "FILTER,...", value_delimiter = ',',
          default_value = "shuffle,bitshuffle", value_parser = parse_lossless_filter)]
    pub(crate) filters: Vec<FilterArg>,

    /// Size in bytes of the items (default 4 for the generated data, whose
    /// items are 4 bytes; 8, C-Blosc2's default, for a file).
    #[arg(short, long, value_name = "TYPESIZE",
          value_parser = clap::value_parser!(u64).range(1..=255))]
    pub(crate) typesize: Option<u64>,

    /// The items' NumPy type (e.g. `<f4`, `i8`), which sets the type size.
    #[arg(long, value_name = "DTYPE", value_parser = parse_dtype, conflicts_with = "typesize")]
    pub(crate) dtype: Option<u64>,

    /// Threads compressing and decompressing the blocks of a chunk.
    #[arg(short, long, value_name = "NTHREADS", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) nthreads: u64,

    /// Bytes per chunk (suffixes K, M: binary).
    #[arg(long, value_name = "BYTES", default_value = "1M", value_parser = parse_chunksize)]
    pub(crate) chunksize: usize,

    /// Bytes of generated data when no FILE is given (suffixes K, M, G).
    #[arg(long, value_name = "BYTES", default_value = "8M",
          value_parser = |s: &str| parse_bytes(s, 1 << 32, "the generated dataset"))]
    pub(crate) size: usize,

    /// Seconds the whole grid may take, shared evenly between the cells and
    /// their two directions; a cell runs at least once each way, so a slow
    /// codec can take longer.
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = parse_seconds)]
    pub(crate) time_budget: f64,

    /// Write a plot of the results (ratio against speed) to this SVG file.
    #[arg(long, value_name = "OUT.svg")]
    pub(crate) svg: Option<PathBuf>,

    /// The file to compress (default: generated data, see --size).
    #[arg(value_name = "FILE")]
    pub(crate) input: Option<PathBuf>,
}

/// A `--filters` value: [`parse_filter`]'s, but not the lossy trunc_prec.
fn parse_lossless_filter(s: &str) -> Result<FilterArg, String> {
    match parse_filter(s)? {
        FilterArg(Some(Filter::TruncPrec(_))) => {
            Err("trunc_prec is lossy: bench checks that every cell gives the input back".into())
        }
        f => Ok(f),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=86_400.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds (0 to 86400)")),
    }
}

/// One cell of the grid, measured.
struct Cell {
    codec: Codec,
    clevel: u8,
    filter: Option<Filter>,
    ratio: f64,
    comp_gbs: f64,
    decomp_gbs: f64,
}

impl Cell {
    fn filter_name(&self) -> String {
        self.filter.map_or_else(|| "none".into(), |f| f.to_string())
    }
}

/// A deterministic stand-in for a scientific dataset: the first half a
/// smooth float32 field (two slow waves) with a little noise in its low
/// mantissa bits, the second half uint32 event counters that grow by small
/// random steps. Both have 4-byte items.
pub(crate) fn generated(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        // SplitMix64.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let items = len / 4;
    let half = items / 2;
    for i in 0..half {
        let x = i as f64;
        let smooth = 20.0 + 8.0 * (x / 700.0).sin() + 3.0 * (x / 9100.0).cos();
        let noise = ((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 1e-3;
        out.extend_from_slice(&((smooth + noise) as f32).to_le_bytes());
    }
    let mut counter = 1_000u32;
    for _ in half..items {
        counter = counter.wrapping_add((next() % 8) as u32);
        out.extend_from_slice(&counter.to_le_bytes());
    }
    out.resize(len, 0);
    out
}

/// Run the grid and print the table (and write the SVG).
pub(crate) fn run(args: BenchArgs) -> Result<(), String> {
    let (data, source) = match &args.input {
        Some(path) => {
            let what = format!("'{}'", path.display());
            let data = std::fs::read(path).map_err(|e| format!("cannot read {what}: {e}"))?;
            (data, what)
        }
        None => (
            generated(args.size),
            "generated float32 field + uint32 counters".to_string(),
        ),
    };
    if data.is_empty() {
        return Err(format!("{source} is empty: nothing to measure"));
    }
    let typesize = args
        .typesize
        .or(args.dtype)
        .unwrap_or(if args.input.is_some() { 8 } else { 4 }) as usize;
    let codecs: Vec<Codec> = if args.codecs.is_empty() {
        Codec::ALL
            .into_iter()
            .filter(|c| c.is_available())
            .collect()
    } else {
        args.codecs.clone()
    };
    let mut grid: Vec<(Codec, u8, Option<Filter>)> = Vec::new();
    for &codec in &codecs {
        for &clevel in &args.levels {
            grid.extend(args.filters.iter().map(|f| (codec, clevel, f.0)));
        }
    }
    let share = Duration::from_secs_f64(args.time_budget / (2 * grid.len()) as f64);
    let chunksize = args.chunksize / typesize * typesize;
    let chunksize = chunksize.max(typesize).min(oxiblosc::MAX_BUFFERSIZE);
    let nthreads = args.nthreads as usize;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "oxiblosc bench: {source}, {} in chunks of {}, typesize {typesize}, {nthreads} thread(s)",
        files::progress::human(data.len() as u64),
        files::progress::human(chunksize as u64),
    );
    // Every cell's parameters are checked before anything is measured.
    let mut runs = Vec::with_capacity(grid.len());
    for (codec, clevel, filter) in grid {
        let cparams = CParams::default()
            .codec(codec)
            .clevel(clevel)
            .typesize(typesize)
            .filters(filter.as_slice())
            .nthreads(nthreads);
        cparams.validate().map_err(|e| strip_invalid_param(&e))?;
        runs.push((codec, clevel, filter, cparams));
    }
    print!("{out}");
    println!("{}", header_line());
    let mut cells = Vec::with_capacity(runs.len());
    for (codec, clevel, filter, cparams) in runs {
        let cell = measure(&data, chunksize, cparams, share)
            .map_err(|e| format!("{} clevel {clevel}: {e}", codec.name()))?;
        let cell = Cell {
            codec,
            clevel,
            filter,
            ..cell
        };
        println!("{}", row_line(&cell));
        cells.push(cell);
    }
    println!(
        "every cell decompressed back to the input ({} cells)",
        cells.len()
    );
    if let Some(path) = &args.svg {
        let title = format!(
            "{source}, {}, typesize {typesize}, {nthreads} thread(s)",
            files::progress::human(data.len() as u64)
        );
        std::fs::write(path, plot(&cells, &title))
            .map_err(|e| format!("cannot write '{}': {e}", path.display()))?;
    }
    Ok(())
}

fn header_line() -> String {
    format!(
        "{:<8} {:>5} {:<12} {:>8} {:>10} {:>12}",
        "codec", "level", "filter", "ratio", "comp GB/s", "decomp GB/s"
    )
}

fn row_line(c: &Cell) -> String {
    format!(
        "{:<8} {:>5} {:<12} {:>8.2} {:>10.3} {:>12.3}",
        c.codec.name(),
        c.clevel,
        c.filter_name(),
        c.ratio,
        c.comp_gbs,
        c.decomp_gbs
    )
}

/// Best seconds of `f` run repeatedly for `budget` (at least once).
fn best_of(budget: Duration, mut f: impl FnMut() -> Result<(), String>) -> Result<f64, String> {
    let start = Instant::now();
    let mut best = f64::INFINITY;
    loop {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64());
        if start.elapsed() >= budget {
            return Ok(best.max(1e-9));
        }
    }
}

/// Compress and decompress `data` chunk by chunk with `cparams`; the
/// codec, level and filter of the returned cell are filled by the caller.
fn measure(
    data: &[u8],
    chunksize: usize,
    cparams: CParams,
    share: Duration,
) -> Result<Cell, String> {
    let nthreads = cparams.nthreads;
    let mut c = Compressor::new(cparams);
    let pieces: Vec<&[u8]> = data.chunks(chunksize).collect();
    let mut chunks: Vec<Vec<u8>> = pieces
        .iter()
        .map(|p| vec![0u8; p.len() + oxiblosc::MAX_OVERHEAD])
        .collect();
    let mut lens = vec![0usize; pieces.len()];
    let comp = best_of(share, || {
        for ((p, dst), len) in pieces.iter().zip(&mut chunks).zip(&mut lens) {
            *len = c.compress_into(p, dst).map_err(|e| e.to_string())?;
        }
        Ok(())
    })?;
    let cbytes: usize = lens.iter().sum();
    for (chunk, &len) in chunks.iter_mut().zip(&lens) {
        chunk.truncate(len);
    }
    let mut d = Decompressor::new(DParams::default().nthreads(nthreads));
    let mut back = vec![0u8; data.len()];
    let mut checked = false;
    let decomp = best_of(share, || {
        let mut at = 0;
        for (chunk, p) in chunks.iter().zip(&pieces) {
            let n = d
                .decompress_into(chunk, &mut back[at..at + p.len()])
                .map_err(|e| format!("cannot decompress: {e}"))?;
            if n != p.len() {
                return Err(format!(
                    "decompressed {n} bytes of a {}-byte chunk",
                    p.len()
                ));
            }
            at += n;
        }
        if !checked {
            if back != data {
                return Err("the decompressed data differ from the input".into());
            }
            checked = true;
        }
        Ok(())
    })?;
    let gbs = |secs: f64| data.len() as f64 / secs / 1e9;
    Ok(Cell {
        codec: Codec::BloscLz,
        clevel: 0,
        filter: None,
        ratio: data.len() as f64 / cbytes.max(1) as f64,
        comp_gbs: gbs(comp),
        decomp_gbs: gbs(decomp),
    })
}

/// Dash patterns of the filters in the plot, in the order first seen.
const DASHES: [&str; 4] = ["none", "5 3", "1 3", "8 3 2 3"];

/// Colours of the codecs in the plot, in `Codec::ALL` order.
const COLOURS: [&str; 5] = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"];

fn colour(codec: Codec) -> &'static str {
    let i = Codec::ALL.iter().position(|&c| c == codec).unwrap_or(0);
    COLOURS[i % COLOURS.len()]
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The plot: speed (GB/s, log scale) across, compression ratio up; one
/// filled circle per cell for compression and one hollow square for
/// decompression, joined by a thin line, coloured by codec. Every mark has
/// class `mark` and a `<title>` naming its cell.
fn plot(cells: &[Cell], title: &str) -> String {
    const W: f64 = 760.0;
    const H: f64 = 480.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 170.0;
    const TOP: f64 = 50.0;
    const BOTTOM: f64 = 60.0;
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    // The speed axis: whole powers of ten around every speed.
    let speeds = cells.iter().flat_map(|c| [c.comp_gbs, c.decomp_gbs]);
    let (mut e_lo, mut e_hi) = (i32::MAX, i32::MIN);
    for s in speeds.filter(|s| s.is_finite() && *s > 0.0) {
        e_lo = e_lo.min(s.log10().floor() as i32);
        e_hi = e_hi.max(s.log10().ceil() as i32);
    }
    if e_lo > e_hi {
        (e_lo, e_hi) = (-1, 1);
    }
    if e_hi == e_lo {
        e_hi += 1;
    }
    let x = |s: f64| {
        let t = (s.max(1e-12).log10() - e_lo as f64) / (e_hi - e_lo) as f64;
        LEFT + pw * t.clamp(0.0, 1.0)
    };
    // The ratio axis: 0 to a round step above the best ratio.
    let top_ratio = cells.iter().map(|c| c.ratio).fold(1.0f64, f64::max);
    let step = [
        0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0,
    ]
    .into_iter()
    .find(|s| top_ratio / s <= 6.0)
    .unwrap_or(1000.0);
    let y_max = (top_ratio / step).ceil().max(1.0) * step;
    let y = |r: f64| TOP + ph * (1.0 - (r / y_max).clamp(0.0, 1.0));

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="14">{}</text>"#,
        W / 2.0,
        xml_escape(title)
    );
    // Grid and ticks.
    for e in e_lo..=e_hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            if e == e_hi && m > 1.0 {
                break;
            }
            let px = x(v);
            let _ = writeln!(
                s,
                r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#ddd"/>"##,
                TOP + ph
            );
            // Over more than three decades only the powers of ten get a label.
            if m > 1.0 && e_hi - e_lo > 3 {
                continue;
            }
            let label = if v >= 1.0 {
                format!("{v}")
            } else {
                format!("{v:.prec$}", prec = (-e) as usize)
            };
            let _ = writeln!(
                s,
                r#"<text x="{px:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
                TOP + ph + 16.0
            );
        }
    }
    let mut r = 0.0;
    while r <= y_max + 1e-9 {
        let py = y(r);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{py:.1}" x2="{:.1}" y2="{py:.1}" stroke="#ddd"/>"##,
            LEFT + pw
        );
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{r}</text>"#,
            LEFT - 6.0,
            py + 4.0
        );
        r += step;
    }
    let _ = writeln!(
        s,
        r#"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="black"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">speed, GB/s (log scale)</text>"#,
        LEFT + pw / 2.0,
        H - 18.0
    );
    let _ = writeln!(
        s,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">compression ratio</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    );
    // The cells; the line joining a cell's two marks is dashed by filter.
    let mut filters: Vec<String> = Vec::new();
    for c in cells {
        if !filters.contains(&c.filter_name()) {
            filters.push(c.filter_name());
        }
    }
    let dash = |name: &str| {
        let i = filters.iter().position(|f| f == name).unwrap_or(0);
        DASHES[i % DASHES.len()]
    };
    for c in cells {
        let (xc, xd, py) = (x(c.comp_gbs), x(c.decomp_gbs), y(c.ratio));
        let col = colour(c.codec);
        let name = format!("{} clevel {} {}", c.codec.name(), c.clevel, c.filter_name());
        let _ = writeln!(
            s,
            r#"<line x1="{xc:.1}" y1="{py:.1}" x2="{xd:.1}" y2="{py:.1}" stroke="{col}" stroke-opacity="0.6" stroke-dasharray="{}"/>"#,
            dash(&c.filter_name())
        );
        let _ = writeln!(
            s,
            r#"<circle class="mark comp" cx="{xc:.1}" cy="{py:.1}" r="4" fill="{col}"><title>{name}: ratio {:.2}, compress {:.3} GB/s</title></circle>"#,
            c.ratio, c.comp_gbs
        );
        let _ = writeln!(
            s,
            r#"<rect class="mark decomp" x="{:.1}" y="{:.1}" width="8" height="8" fill="white" stroke="{col}" stroke-width="1.5"><title>{name}: ratio {:.2}, decompress {:.3} GB/s</title></rect>"#,
            xd - 4.0,
            py - 4.0,
            c.ratio,
            c.decomp_gbs
        );
    }
    // The legend: one colour per codec shown, then the two shapes.
    let lx = LEFT + pw + 16.0;
    let mut ly = TOP + 10.0;
    let mut shown: Vec<Codec> = cells.iter().map(|c| c.codec).collect();
    shown.dedup();
    for codec in shown {
        let _ = writeln!(
            s,
            r#"<circle cx="{lx}" cy="{ly}" r="5" fill="{}"/><text x="{}" y="{}">{}</text>"#,
            colour(codec),
            lx + 12.0,
            ly + 4.0,
            codec.name()
        );
        ly += 20.0;
    }
    ly += 10.0;
    let _ = writeln!(
        s,
        r##"<circle cx="{lx}" cy="{ly}" r="4" fill="#555"/><text x="{}" y="{}">compress</text>"##,
        lx + 12.0,
        ly + 4.0
    );
    ly += 20.0;
    let _ = writeln!(
        s,
        r##"<rect x="{}" y="{}" width="8" height="8" fill="white" stroke="#555" stroke-width="1.5"/><text x="{}" y="{}">decompress</text>"##,
        lx - 4.0,
        ly - 4.0,
        lx + 12.0,
        ly + 4.0
    );
    for f in &filters {
        ly += 20.0;
        let _ = writeln!(
            s,
            r##"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="#555" stroke-dasharray="{}"/><text x="{}" y="{}">{}</text>"##,
            lx - 6.0,
            lx + 6.0,
            dash(f),
            lx + 12.0,
            ly + 4.0,
            xml_escape(f)
        );
    }
    s.push_str("</svg>\n");
    s
}
