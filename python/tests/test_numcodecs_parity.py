"""Every test of numcodecs 0.16.6's own ``tests/test_blosc.py`` that passes on
stock numcodecs passes on ``oxiblosc.numcodecs`` (our copy differs only in its
two imports; see NUMCODECS.md)."""

import pathlib
import re
import subprocess
import sys

from conftest import FIXTURE_ROOT, fixture_cwd, tree_digest

HERE = pathlib.Path(__file__).resolve().parent


def _outcomes(test_file, cwd):
    """{test id: outcome} from running ``test_file`` with pytest in ``cwd``."""
    r = subprocess.run(
        [sys.executable, "-m", "pytest", str(test_file), "-q", "-rA", "-p", "no:cacheprovider",
         "--rootdir", str(cwd), "-o", "addopts=", "--confcutdir", str(cwd)],
        cwd=cwd, capture_output=True, text=True, timeout=600,
    )
    out = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS) (?:\[\d+\] )?(\S+)", line)
        if m:
            name = m.group(2).split("::", 1)[-1]
            out[name] = m.group(1)
    return out, r


def test_stock_passes_imply_ours_pass(tmp_path):
    import numcodecs
    import numcodecs.tests

    stock_file = pathlib.Path(numcodecs.tests.__file__).parent / "test_blosc.py"
    assert numcodecs.__version__ == "0.16.6", numcodecs.__version__
    ours_file = HERE / "test_numcodecs_blosc.py"
    # the copy is the stock file with exactly its two imports changed
    stock_lines = stock_file.read_text().splitlines()
    ours_lines = ours_file.read_text().splitlines()
    assert len(stock_lines) == len(ours_lines)
    changed = [(a, b) for a, b in zip(stock_lines, ours_lines, strict=True) if a != b]
    assert changed == [
        ("    from numcodecs import blosc", "    from oxiblosc import numcodecs as blosc"),
        ("    from numcodecs.blosc import Blosc", "    from oxiblosc.numcodecs import Blosc"),
    ]

    before = tree_digest(FIXTURE_ROOT)
    stock_dir = fixture_cwd(tmp_path / "stock_run")
    ours_dir = fixture_cwd(tmp_path / "ours_run")
    # run both copies from outside the package so that our conftest does not apply
    (stock_dir / "test_stock_blosc.py").write_text(stock_file.read_text())
    (ours_dir / "test_ours_blosc.py").write_text(ours_file.read_text())
    stock, rs = _outcomes(stock_dir / "test_stock_blosc.py", stock_dir)
    ours, ro = _outcomes(ours_dir / "test_ours_blosc.py", ours_dir)
    assert tree_digest(FIXTURE_ROOT) == before, "numcodecs' fixture files were rewritten"

    stock_passed = {k for k, v in stock.items() if v == "PASSED"}
    ours_passed = {k for k, v in ours.items() if v == "PASSED"}
    assert len(stock_passed) > 150, rs.stdout[-3000:]
    missing = sorted(stock_passed - ours_passed)
    assert not missing, f"pass on stock numcodecs, not on oxiblosc: {missing}\n{ro.stdout[-5000:]}"
    print(f"stock numcodecs: {len(stock_passed)} passed of {len(stock)}; "
          f"oxiblosc: {len(ours_passed)} passed of {len(ours)}")
