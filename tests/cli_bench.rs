//! `oxiblosc bench` run as a process, on tiny datasets with a zero time
//! budget (each cell runs once each way): one table row per cell of the
//! grid with the ratio the library gives, an SVG that is well-formed XML
//! with one mark per cell and direction, and clear errors.

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use oxiblosc::{CParams, Codec, Filter};
use quick_xml::Reader;
use quick_xml::events::Event;

const BIN: &str = env!("CARGO_BIN_EXE_oxiblosc");

fn bench(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("bench")
        .args(args)
        .output()
        .expect("run oxiblosc")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A table row: codec, level, filter, ratio, compress GB/s, decompress GB/s.
#[derive(Debug)]
struct Row {
    codec: String,
    level: u8,
    filter: String,
    ratio: f64,
    comp: f64,
    decomp: f64,
}

/// The rows of the table, checked to lie between its header line and the
/// closing line.
fn rows(out: &str) -> Vec<Row> {
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("oxiblosc bench: "), "{out}");
    let head: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "codec", "level", "filter", "ratio", "comp", "GB/s", "decomp", "GB/s"
        ],
        "{out}"
    );
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("every cell decompressed back to the input"),
        "{out}"
    );
    lines[2..lines.len() - 1]
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 6, "{l}");
            let num = |s: &str| -> f64 { s.parse().unwrap_or_else(|_| panic!("{l}")) };
            Row {
                codec: f[0].into(),
                level: f[1].parse().unwrap(),
                filter: f[2].into(),
                ratio: num(f[3]),
                comp: num(f[4]),
                decomp: num(f[5]),
            }
        })
        .collect()
}

/// Elements of the SVG by their `class`, after reading the whole document
/// with an XML parser (any syntax error fails the test); also the root
/// element's name.
fn svg_marks(path: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut reader = Reader::from_str(&text);
    let mut root = None;
    let mut classes = Vec::new();
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                root.get_or_insert(name);
                for a in e.attributes() {
                    let a = a.expect("a well-formed attribute");
                    if a.key.as_ref() == b"class" {
                        classes.push(String::from_utf8(a.value.to_vec()).unwrap());
                    }
                }
            }
            _ => {}
        }
    }
    (root.expect("an element"), classes)
}

#[test]
fn a_row_per_cell_and_a_well_formed_svg_with_a_mark_per_cell_and_direction() {
    let dir = support::tempdir("cli-bench-grid");
    let svg = dir.join("plot.svg");
    let out = stdout(&bench(&[
        "--codecs",
        "blosclz,lz4",
        "--levels",
        "1,9",
        "--filters",
        "shuffle,none",
        "--size",
        "64K",
        "--chunksize",
        "16K",
        "--time-budget",
        "0",
        "--svg",
        svg.to_str().unwrap(),
    ]));
    assert!(
        out.starts_with(
            "oxiblosc bench: generated float32 field + uint32 counters, 64.0 KiB in chunks of \
             16.0 KiB, typesize 4, 1 thread(s)\n"
        ),
        "{out}"
    );
    let rows = rows(&out);
    let cells: BTreeSet<(String, u8, String)> = rows
        .iter()
        .map(|r| (r.codec.clone(), r.level, r.filter.clone()))
        .collect();
    let mut want = BTreeSet::new();
    for codec in ["blosclz", "lz4"] {
        for level in [1, 9] {
            for filter in ["shuffle", "none"] {
                want.insert((codec.to_string(), level, filter.to_string()));
            }
        }
    }
    assert_eq!(rows.len(), 8, "{out}");
    assert_eq!(cells, want, "{out}");
    for r in &rows {
        assert!(r.ratio.is_finite() && r.ratio > 0.5, "{r:?}");
        assert!(r.comp > 0.0 && r.decomp > 0.0, "{r:?}");
    }
    // The generated data is realistic, hence compressible: shuffle helps.
    let shuffled = rows
        .iter()
        .find(|r| (r.codec.as_str(), r.level, r.filter.as_str()) == ("lz4", 9, "shuffle"))
        .unwrap();
    let plain = rows
        .iter()
        .find(|r| (r.codec.as_str(), r.level, r.filter.as_str()) == ("lz4", 9, "none"))
        .unwrap();
    assert!(
        shuffled.ratio > 1.5 && shuffled.ratio > plain.ratio,
        "{out}"
    );

    let (root, classes) = svg_marks(&svg);
    assert_eq!(root, "svg");
    let count = |c: &str| classes.iter().filter(|k| *k == c).count();
    assert_eq!(count("mark comp"), 8, "{classes:?}");
    assert_eq!(count("mark decomp"), 8, "{classes:?}");
}

#[test]
fn a_files_ratio_is_the_librarys_for_the_same_chunks() {
    let dir = support::tempdir("cli-bench-file");
    let input = dir.join("in.bin");
    let data = support::data(100_000, 7);
    std::fs::write(&input, &data).unwrap();
    let out = stdout(&bench(&[
        "--codecs",
        "zstd",
        "--levels",
        "3",
        "--filters",
        "bitshuffle",
        "--dtype",
        "<i2",
        "--chunksize",
        "30000",
        "--time-budget",
        "0",
        input.to_str().unwrap(),
    ]));
    assert!(
        out.starts_with(&format!(
            "oxiblosc bench: '{}', 97.7 KiB in chunks of 29.3 KiB, typesize 2, 1 thread(s)\n",
            input.display()
        )),
        "{out}"
    );
    let rows = rows(&out);
    assert_eq!(rows.len(), 1, "{out}");
    let p = CParams::default()
        .codec(Codec::Zstd)
        .clevel(3)
        .typesize(2)
        .filters(&[Filter::BitShuffle]);
    let cbytes: usize = data
        .chunks(30_000)
        .map(|c| oxiblosc::compress(c, &p).unwrap().len())
        .sum();
    let want = data.len() as f64 / cbytes as f64;
    assert_eq!(
        format!("{:.2}", rows[0].ratio),
        format!("{want:.2}"),
        "{out}"
    );
    assert_eq!(
        (
            rows[0].codec.as_str(),
            rows[0].level,
            rows[0].filter.as_str()
        ),
        ("zstd", 3, "bitshuffle")
    );
}

#[test]
fn bad_input_and_bad_arguments_are_clear_errors() {
    let dir = support::tempdir("cli-bench-errors");
    let empty = dir.join("empty");
    std::fs::write(&empty, b"").unwrap();
    let fail = |args: &[&str], code: i32, says: &str| {
        let o = bench(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(o.stdout.is_empty() || code == 1, "{args:?}");
    };
    fail(
        &[empty.to_str().unwrap()],
        1,
        "is empty: nothing to measure",
    );
    let missing = dir.join("missing");
    fail(&[missing.to_str().unwrap()], 1, "cannot read");
    fail(&["--codecs", "nope"], 2, "nope");
    fail(&["--levels", "10"], 2, "10");
    fail(&["--filters", "wobble"], 2, "wobble");
    fail(
        &["--filters", "shuffle,trunc_prec:5"],
        2,
        "trunc_prec is lossy",
    );
    fail(&["--time-budget=-1"], 2, "seconds");
    fail(&["--time-budget", "soon"], 2, "seconds");
    fail(
        &["--typesize", "2", "--dtype", "f4"],
        2,
        "cannot be used with",
    );
}
