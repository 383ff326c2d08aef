"""ArtifactSorter: files and directories move to good/ or bad/ with timestamp, iteration and
exit-status suffixes; names never collide, nothing is overwritten or lost."""

from __future__ import annotations

import os
import re

from poly.debug import ArtifactSorter


def test_files_and_directories_are_sorted_with_suffixes(tmp_path):
    (tmp_path / "log.txt").write_text("first")
    (tmp_path / "dumps").mkdir()
    (tmp_path / "dumps" / "a.bin").write_bytes(b"\x00\x01")
    sorter = ArtifactSorter(["log.txt", "dumps"], "arts")

    moved = sorter.sort(False, "_N0", returncode=3)

    assert len(moved) == 2 and not (tmp_path / "log.txt").exists() and not (tmp_path / "dumps").exists()
    log, dumps = (os.path.basename(p) for p in moved)
    assert re.fullmatch(r"log_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_N0_rc3\.txt", log), log
    assert re.fullmatch(r"dumps_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_N0_rc3", dumps), dumps
    assert (tmp_path / "arts" / "bad" / log).read_text() == "first"
    assert (tmp_path / "arts" / "bad" / dumps / "a.bin").read_bytes() == b"\x00\x01"

    (tmp_path / "log.txt").write_text("second")
    moved = sorter.sort(True, "_N1", returncode=0)
    assert os.path.dirname(moved[0]) == os.path.join("arts", "good")
    assert moved[0].endswith("_N1_rc0.txt")


def test_nothing_is_overwritten(tmp_path):
    sorter = ArtifactSorter(["out.json"], "arts", start_time=0)
    contents = []
    for i in range(3):
        (tmp_path / "out.json").write_text(str(i))
        contents.append(str(i))
        sorter.sort(True, "_N0")  # the same suffix each time: names must still differ
    kept = sorted(p.read_text() for p in (tmp_path / "arts" / "good").iterdir())
    assert kept == contents
    names = sorted(p.name for p in (tmp_path / "arts" / "good").iterdir())
    assert names[1].endswith("_N0_1.json") and names[2].endswith("_N0_2.json")


def test_missing_artifact_is_skipped_with_a_warning(tmp_path, capsys):
    (tmp_path / "present.txt").write_text("x")
    moved = ArtifactSorter(["absent.txt", "present.txt"], "arts").sort(True, "_N0")
    assert [os.path.basename(os.path.dirname(p)) for p in moved] == ["good"]
    assert "absent.txt" in capsys.readouterr().out
