//! A results table printed as markdown and written as CSV.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Rows of string cells under a header.
#[derive(Clone, Debug, Default)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are left empty, extra ones dropped).
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }

    /// The table as GitHub-flavoured markdown, columns padded to align;
    /// every column but the first three is right-aligned (numbers).
    pub fn markdown(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header[c])
                    .chain(self.rows.iter().map(|r| &r[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
                    .max(3)
            })
            .collect();
        let right = |c: usize| c >= 3;
        let line = |cells: &[String]| {
            let mut s = String::from("|");
            for (c, cell) in cells.iter().enumerate() {
                let w = widths[c];
                if right(c) {
                    let _ = write!(s, " {cell:>w$} |");
                } else {
                    let _ = write!(s, " {cell:<w$} |");
                }
            }
            s.push('\n');
            s
        };
        let mut out = line(&self.header);
        out.push('|');
        for (c, &w) in widths.iter().enumerate() {
            let dashes = "-".repeat(w);
            if right(c) {
                let _ = write!(out, " {}: |", &dashes[1..]);
            } else {
                let _ = write!(out, " {dashes} |");
            }
        }
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
        }
        out
    }

    /// The table as CSV (RFC 4180 quoting where needed).
    pub fn csv(&self) -> String {
        let quote = |s: &String| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.clone()
            }
        };
        let mut out = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            out.push_str(&r.iter().map(quote).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }

    /// Writes [`Table::csv`] to `path`, creating its directory.
    ///
    /// # Errors
    /// Any I/O error.
    pub fn write_csv(&self, path: &Path) -> io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, self.csv())
    }
}

#[cfg(test)]
mod tests {
    use super::Table;

    #[test]
    fn markdown_and_csv() {
        let mut t = Table::new(["kernel", "ts", "size", "GB/s"]);
        t.push(vec![
            "shuffle".into(),
            "4".into(),
            "32 KiB".into(),
            "1.50".into(),
        ]);
        let md = t.markdown();
        assert!(md.starts_with("| kernel  | ts  | size   | GB/s |\n"));
        assert!(md.contains("| ------- | --- | ------ | ---: |"));
        assert_eq!(t.csv(), "kernel,ts,size,GB/s\nshuffle,4,32 KiB,1.50\n");
    }
}
