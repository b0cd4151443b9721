//! Bad arguments are errors with a useful message, never panics; the
//! `OXIBLOSC_KERNELS` switch picks an implementation or refuses clearly.

use oxiblosc_kernels::{Error, Isa, Kernels};
use std::process::Command;

#[test]
fn bad_arguments_are_errors() {
    for k in Kernels::available() {
        let src = [1u8; 10];
        let mut short = [0u8; 9];
        let mut ok = [0u8; 10];
        let mismatch = Error::LengthMismatch { src: 10, dst: 9 };
        assert_eq!(k.shuffle(4, &src, &mut short), Err(mismatch.clone()));
        assert_eq!(k.unshuffle(4, &src, &mut short), Err(mismatch.clone()));
        assert_eq!(k.bitshuffle(4, &src, &mut short), Err(mismatch.clone()));
        assert_eq!(k.bitunshuffle(4, &src, &mut short), Err(mismatch.clone()));
        assert_eq!(
            k.bytedelta_decode(4, &src, &mut short),
            Err(mismatch.clone())
        );
        assert_eq!(k.delta_decode(4, None, &src, &mut short), Err(mismatch));
        assert_eq!(k.shuffle(0, &src, &mut ok), Err(Error::ZeroTypesize));
        assert_eq!(k.bitunshuffle(0, &src, &mut ok), Err(Error::ZeroTypesize));
        assert_eq!(
            k.delta_encode(4, Some(&src[..8]), &src, &mut ok),
            Err(Error::ReferenceTooShort {
                reference: 8,
                needed: 10
            })
        );
        assert_eq!(
            k.trunc_prec(2, 5, &src, &mut ok),
            Err(Error::TruncPrecTypesize(2))
        );
        assert_eq!(
            k.trunc_prec(4, 0, &src, &mut ok),
            Err(Error::TruncPrecBits {
                typesize: 4,
                prec: 0
            })
        );
        // Nothing was written by a refused call.
        assert_eq!(ok, [0u8; 10]);
    }
    let msg = Error::LengthMismatch { src: 10, dst: 9 }.to_string();
    assert!(msg.contains("10") && msg.contains('9'), "{msg}");
}

#[test]
fn isa_names_round_trip() {
    for isa in Isa::ALL {
        assert_eq!(isa.name().parse::<Isa>(), Ok(isa));
    }
    assert_eq!("AVX2".parse::<Isa>(), Ok(Isa::Avx2));
    assert!(matches!("avx512".parse::<Isa>(), Err(Error::UnknownIsa(_))));
    assert!(Isa::Generic.is_available());
    assert_eq!(
        Kernels::best().isa(),
        Kernels::available().last().unwrap().isa()
    );
}

/// Runs this test binary again with `OXIBLOSC_KERNELS` set and the
/// `child_reports_selection` test selected; returns (success, stdout+stderr).
fn run_child(value: &str) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_reports_selection",
            "--ignored",
            "--nocapture",
        ])
        .env("OXIBLOSC_KERNELS", value)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
#[ignore = "helper run by env_switch_selects_or_refuses in a child process"]
fn child_reports_selection() {
    match Kernels::selected() {
        Ok(k) => println!("SELECTED={}", k.isa()),
        Err(e) => println!("REFUSED={e}"),
    }
    // The free functions use the same choice (and panic when it was refused).
    let mut dst = [0u8; 16];
    oxiblosc_kernels::shuffle(2, &[7u8; 16], &mut dst).unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "spawns processes")]
fn env_switch_selects_or_refuses() {
    for k in Kernels::available() {
        let (ok, out) = run_child(k.isa().name());
        assert!(ok, "{out}");
        assert!(out.contains(&format!("SELECTED={}", k.isa())), "{out}");
    }
    let (ok, out) = run_child("avx512");
    assert!(!ok, "an unknown implementation must be refused: {out}");
    assert!(
        out.contains("REFUSED=") && out.contains("avx512") && out.contains("generic"),
        "{out}"
    );
    for isa in Isa::ALL.into_iter().filter(|i| !i.is_available()) {
        let (ok, out) = run_child(isa.name());
        assert!(
            !ok,
            "{isa} is not available here and must be refused: {out}"
        );
        assert!(out.contains("cannot run"), "{out}");
    }
}
