"""examples/quickstart.py (the README's quick start) runs, interpreted and compiled, and as a
user runs it with warnings turned into errors: no ResourceWarning (unclosed file)."""
import os
import subprocess
import sys

import pytest

from _examples import EXAMPLES, load_example


@pytest.mark.parametrize("compiled", [False, True])
def test_quickstart(tmp_path, compiled):
    ex = load_example("mass_spring_damper_pid")
    result = load_example("quickstart").main(["--out", str(tmp_path)] + (["--compiled"] if compiled else []))
    assert abs(result["final_position"] - ex.exact_position(10.0, 0.5)) < 1e-6
    assert result["plot"] is None or os.path.getsize(result["plot"]) > 1000
    assert (tmp_path / "quickstart.dot").read_text().startswith("digraph")


def _run(code_or_script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg")
    args = ([code_or_script, "--out", str(tmp_path)] if code_or_script.endswith(".py")
            else ["-c", code_or_script])
    return subprocess.run([sys.executable, "-W", "error::ResourceWarning", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)


def test_quickstart_leaves_no_file_open(tmp_path):
    """A ResourceWarning raised by a file's finalizer does not change the exit status (Python
    prints "Exception ignored in ..."), so stderr is checked too."""
    proc = _run(os.path.join(EXAMPLES, "quickstart.py"), tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ResourceWarning" not in proc.stderr, proc.stderr
    assert (tmp_path / "quickstart.dot").is_file()


def test_the_check_sees_an_unclosed_file(tmp_path):
    """The check above can fail: the README's old line leaves the file to the finalizer."""
    proc = _run('open("x.dot", "w").write("digraph {}")', tmp_path)
    assert "ResourceWarning" in proc.stderr
