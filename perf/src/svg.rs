//! A speed-vs-ratio scatter plot of the `chunks` rows, as a hand-written SVG
//! (no plotting dependency): two panels, compression and decompression
//! GB/s (log) against the compression ratio (log), one marker per row and
//! library, ours and C in two colours, the codec by the marker's shape, a
//! grey segment joining the two markers of a row, and the median memcpy
//! speed as a dashed line.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use oxiblosc::Codec;

use crate::chunks::Row;

const OURS: &str = "#1f77b4";
const C: &str = "#ff7f0e";
const PANEL_W: f64 = 560.0;
const PANEL_H: f64 = 420.0;
const MARGIN_L: f64 = 64.0;
const MARGIN_R: f64 = 16.0;
const MARGIN_T: f64 = 48.0;
const MARGIN_B: f64 = 56.0;

/// A log10 axis over whole decades.
#[derive(Clone, Copy, Debug)]
struct LogAxis {
    lo: f64,
    hi: f64,
}

impl LogAxis {
    fn covering(values: impl Iterator<Item = f64>) -> LogAxis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v.log10());
            hi = hi.max(v.log10());
        }
        if !lo.is_finite() {
            return LogAxis { lo: 0.0, hi: 1.0 };
        }
        // A ratio a hair under 1 (a chunk stored raw) should not add a decade.
        let (lo, hi) = ((lo + 0.01).floor(), (hi - 0.01).ceil());
        LogAxis {
            lo,
            hi: if hi > lo { hi } else { lo + 1.0 },
        }
    }

    /// Position of `v` in 0..=1 (clamped).
    fn frac(&self, v: f64) -> f64 {
        ((v.log10() - self.lo) / (self.hi - self.lo)).clamp(0.0, 1.0)
    }

    /// Tick values: 1, 2, 5 x 10^k when the axis spans few decades, else 10^k.
    fn ticks(&self) -> Vec<f64> {
        let mults: &[f64] = if self.hi - self.lo <= 3.0 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut t = Vec::new();
        for e in self.lo as i32..=self.hi as i32 {
            for m in mults {
                let v = m * 10f64.powi(e);
                if v.log10() <= self.hi + 1e-9 {
                    t.push(v);
                }
            }
        }
        t
    }
}

fn tick_label(v: f64) -> String {
    if v >= 1e4 {
        format!("1e{}", v.log10().round())
    } else if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let digits = (-v.log10()).ceil() as usize;
        format!("{v:.digits$}")
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The SVG document for `rows` (rows that failed their checks are left out).
pub fn render(rows: &[Row]) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.ok()).collect();
    let xs = LogAxis::covering(rows.iter().flat_map(|r| r.points().map(|p| p.0)));
    let mut memcpy: Vec<f64> = rows.iter().map(|r| r.memcpy()).collect();
    memcpy.sort_by(f64::total_cmp);
    let memcpy = memcpy.get(memcpy.len() / 2).copied();
    let ys = LogAxis::covering(
        rows.iter()
            .flat_map(|r| r.points().into_iter().flat_map(|p| [p.1, p.2]))
            .chain(memcpy),
    );
    let width = 2.0 * PANEL_W;
    let height = PANEL_H + 40.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="{width}" height="{height}" fill="white"/>"#
    );
    let _ = writeln!(
        s,
        r#"<text x="{}" y="20" text-anchor="middle" font-size="15">oxiblosc vs C-Blosc2 {}: speed against compression ratio ({} rows; hover a marker for its row)</text>"#,
        width / 2.0,
        crate::c::loaded_library().map_or_else(crate::c::version, |(_, v)| v),
        rows.len()
    );
    for (panel, (title, which)) in [("compression", 1usize), ("decompression", 2)]
        .into_iter()
        .enumerate()
    {
        let ox = panel as f64 * PANEL_W;
        let (x0, x1) = (ox + MARGIN_L, ox + PANEL_W - MARGIN_R);
        let (y0, y1) = (MARGIN_T, PANEL_H - MARGIN_B + MARGIN_T - 24.0);
        let px = |v: f64| x0 + xs.frac(v) * (x1 - x0);
        let py = |v: f64| y1 - ys.frac(v) * (y1 - y0);
        // Frame, grid, ticks.
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
            x1 - x0,
            y1 - y0
        );
        for t in xs.ticks() {
            let x = px(t);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#ddd"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
                y1 + 16.0,
                tick_label(t)
            );
        }
        for t in ys.ticks() {
            let y = py(t);
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 - 6.0,
                y + 4.0,
                tick_label(t)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">compression ratio (nbytes / cbytes, log)</text>"#,
            (x0 + x1) / 2.0,
            y1 + 36.0
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate({},{}) rotate(-90)" text-anchor="middle">{title} GB/s (log)</text>"#,
            ox + 16.0,
            (y0 + y1) / 2.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="14">{title}</text>"#,
            (x0 + x1) / 2.0,
            y0 - 8.0
        );
        if let Some(m) = memcpy {
            let y = py(m);
            let _ = writeln!(
                s,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#888" stroke-dasharray="6 4"/><text x="{}" y="{:.1}" fill="#666">memcpy {m:.1} GB/s</text>"##,
                x0 + 4.0,
                y - 4.0
            );
        }
        // Pairs, then markers (so markers are on top).
        for r in &rows {
            let [o, c] = r.points();
            let val = |p: (f64, f64, f64)| if which == 1 { p.1 } else { p.2 };
            let _ = writeln!(
                s,
                r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#bbb" stroke-width="0.8"/>"##,
                px(o.0),
                py(val(o)),
                px(c.0),
                py(val(c))
            );
        }
        for r in &rows {
            let label = escape(&r.label());
            for (p, colour, who) in [(r.points()[0], OURS, "ours"), (r.points()[1], C, "C")] {
                let v = if which == 1 { p.1 } else { p.2 };
                let title = format!("{who}: {label}: ratio {:.2}, {v:.3} GB/s", p.0);
                marker(&mut s, r.codec(), px(p.0), py(v), colour, &title);
            }
        }
    }
    // Legend: colours, then one shape per codec shown.
    let ly = height - 14.0;
    let mut lx = MARGIN_L;
    for (colour, name) in [(OURS, "oxiblosc"), (C, "C-Blosc2")] {
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="10" height="10" fill="{colour}"/><text x="{}" y="{ly}">{name}</text>"#,
            lx,
            ly - 9.0,
            lx + 14.0
        );
        lx += 90.0;
    }
    for codec in Codec::ALL {
        if rows.iter().any(|r| r.codec() == codec) {
            marker(&mut s, codec, lx + 4.0, ly - 4.0, "#555", codec.name());
            let _ = writeln!(s, r#"<text x="{}" y="{ly}">{codec}</text>"#, lx + 12.0);
            lx += 70.0;
        }
    }
    s.push_str("</svg>\n");
    s
}

/// One marker at (x, y): the shape tells the codec (circle blosclz, square
/// lz4, diamond lz4hc, triangle zlib, down-triangle zstd).
fn marker(s: &mut String, codec: Codec, x: f64, y: f64, colour: &str, title: &str) {
    let r = 3.6;
    let shape = match codec {
        Codec::BloscLz => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}""#),
        Codec::Lz4 => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}""#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        Codec::Lz4Hc => format!(
            r#"<polygon points="{x:.1},{:.1} {:.1},{y:.1} {x:.1},{:.1} {:.1},{y:.1}""#,
            y - 1.3 * r,
            x + 1.3 * r,
            y + 1.3 * r,
            x - 1.3 * r
        ),
        Codec::Zlib => format!(
            r#"<polygon points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}""#,
            y - 1.3 * r,
            x + 1.2 * r,
            y + r,
            x - 1.2 * r,
            y + r
        ),
        _ => format!(
            r#"<polygon points="{x:.1},{:.1} {:.1},{:.1} {:.1},{:.1}""#,
            y + 1.3 * r,
            x + 1.2 * r,
            y - r,
            x - 1.2 * r,
            y - r
        ),
    };
    let _ = writeln!(
        s,
        r#"{shape} fill="{colour}" fill-opacity="0.75"><title>{title}</title></{}>"#,
        shape[1..].split(' ').next().unwrap_or("circle")
    );
}

/// Writes [`render`] to `path`, creating its directory.
///
/// # Errors
/// Any I/O error.
pub fn write(path: &Path, rows: &[Row]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, render(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes() {
        let a = LogAxis::covering([0.03, 7.0].into_iter());
        assert_eq!((a.lo, a.hi), (-2.0, 1.0));
        assert!((a.frac(1.0) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(a.ticks().first(), Some(&0.01));
        assert_eq!(a.ticks().last(), Some(&10.0));
        assert_eq!(tick_label(0.05), "0.05");
        assert_eq!(tick_label(20.0), "20");
        assert_eq!(tick_label(1e5), "1e5");
        // Raw-stored chunks (ratio just under 1) do not add a decade.
        assert_eq!(LogAxis::covering([0.9999, 30.0].into_iter()).lo, 0.0);
        let empty = render(&[]);
        assert!(empty.starts_with("<svg") && empty.ends_with("</svg>\n"));
    }
}
