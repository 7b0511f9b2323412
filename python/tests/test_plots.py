"""Pictures: `python -m graphtier.train --plot run.png` and scripts/plots.py (the PNG files that
docs/benchmarks.md shows)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_train_errors import _assert_refused

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SHORT = ["--batch-size", "256", "--fanouts", "5,5", "--hidden", "16", "--threads", "2", "--quiet"]


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 1000 and data[:8] == PNG_SIGNATURE, (path, len(data), data[:8])
    assert not list(path.parent.glob(path.name + ".tmp-*"))  # written atomically: no temporary left


def test_train_plot_writes_a_png(synthetic, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (scripts/setup.sh installs it)")
    import graphtier.train as train

    plot = tmp_path / "run.png"
    assert train.main([synthetic, *SHORT, "--epochs", "2", "--plot", str(plot)]) == 0
    _assert_png(plot)


def test_train_plot_without_matplotlib_is_one_line_before_training(synthetic, tmp_path):
    plot = tmp_path / "run.png"
    code = ("import sys; sys.modules['matplotlib'] = None; import graphtier.train as t; "
            f"sys.exit(t.main({[synthetic, *SHORT, '--epochs', '50', '--plot', str(plot)]!r}))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    _assert_refused(r, "--plot needs matplotlib", "pip install matplotlib")
    assert not plot.exists()


# Pictures on the benchmarks page that scripts/plots.py does not draw, and the script that does.
DRAWN_BY_BENCHES = {"scaleout_model.png": "bench/distributed/model.py"}


def test_benchmark_plots_are_drawn_from_the_benchmarks_page(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (scripts/setup.sh installs it)")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "plots.py"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    drawn = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(drawn) == 5
    for name in drawn:
        _assert_png(tmp_path / name)
    # The page shows every one of them, and they are in the repository; besides them only the
    # pictures a bench script draws from its own measurements.
    shown = set(re.findall(r"\]\(img/([\w.-]+\.png)\)", (ROOT / "docs" / "benchmarks.md").read_text()))
    assert shown == set(drawn) | set(DRAWN_BY_BENCHES)
    for name, script in DRAWN_BY_BENCHES.items():
        assert (ROOT / "docs" / "img" / name).is_file() and (ROOT / script).is_file(), (name, script)
    for name in drawn:
        assert (ROOT / "docs" / "img" / name).is_file()


def test_benchmark_plots_name_a_changed_table(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (scripts/setup.sh installs it)")
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Read engine\n\n| run | depth |\n| --- | --- |\n| 1 | 32 |\n")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "plots.py"), "--doc", str(doc), "--out",
                        str(tmp_path / "img")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Read engine" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
