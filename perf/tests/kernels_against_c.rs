//! `oxiblosc-perf kernels` checks every contestant's output against
//! C-Blosc2's before timing it and fails on a difference. Run it on odd
//! typesizes and a length with leftovers: our kernels, the static C-Blosc2
//! 2.15's and python-blosc2's C-Blosc2 3.3.5 (its exported `blosc2_shuffle`
//! & co., the default third C contestant) must all agree.

use std::process::Command;

#[test]
fn kernels_agree_with_c_blosc2_3_3_5_and_2_15() {
    let out = Command::new(env!("CARGO_BIN_EXE_oxiblosc-perf"))
        .args([
            "kernels",
            "--quick",
            "--rounds",
            "1",
            "--typesize",
            "1,2,3,4,5,7,8,9,16,17,24",
            "--size",
            "4099,32k",
            "--no-csv",
        ])
        .output()
        .expect("run oxiblosc-perf");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "oxiblosc-perf kernels failed\n{stdout}\n{stderr}"
    );
    // The table has the 3.3.5 columns, and 88 rows each checked "ok".
    let header = stdout
        .lines()
        .find(|l| l.starts_with("| kernel"))
        .expect("a table header");
    assert!(
        header.contains("| C-Blosc2 3.3.5 |") && header.contains("ours/C-Blosc2 3.3.5"),
        "{header}"
    );
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| {
            [
                "| shuffle ",
                "| unshuffle ",
                "| bitshuffle ",
                "| bitunshuffle ",
            ]
            .iter()
            .any(|k| l.starts_with(k))
        })
        .collect();
    assert_eq!(rows.len(), 4 * 11 * 2, "{stdout}");
    assert!(
        rows.iter().all(|r| r.trim_end().ends_with("ok |")),
        "{stdout}"
    );
}
