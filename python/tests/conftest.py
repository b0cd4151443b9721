"""Shared fixtures: numcodecs' fixture files, read in place and never rewritten."""

import hashlib
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
#: numcodecs' fixture files (MIT), kept once in the repository.
FIXTURE_ROOT = REPO / "tests" / "data" / "numcodecs"


def tree_digest(root):
    """A digest of every file name and content under ``root``."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def fixture_cwd(tmp_path):
    """A directory whose ``fixture`` links to numcodecs' fixture files."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "fixture").symlink_to(FIXTURE_ROOT, target_is_directory=True)
    return tmp_path


@pytest.fixture(autouse=True, scope="module")
def _numcodecs_fixture_dir(request, tmp_path_factory):
    """For numcodecs' own test module: run from a directory where
    ``fixture/blosc`` is the repository's copy, and check afterwards that no
    fixture file was written."""
    if "numcodecs_blosc" not in request.module.__name__:
        yield
        return
    assert (FIXTURE_ROOT / "blosc" / "codec.00" / "config.json").is_file(), FIXTURE_ROOT
    before = tree_digest(FIXTURE_ROOT)
    old = os.getcwd()
    os.chdir(fixture_cwd(tmp_path_factory.mktemp("numcodecs")))
    try:
        yield
    finally:
        os.chdir(old)
    assert tree_digest(FIXTURE_ROOT) == before, "numcodecs' fixture files were rewritten"
