"""The chapters' kernels forked from one zygote (tools/kernel_forks.py) behave as new kernels.

``tools/execute_notebooks.py`` runs each notebook in a kernel forked from a process that has
imported ipykernel, torch and matplotlib. Here it runs small notebooks that way, in a process of
their own, and reads their outputs back from the cache it wrote: each runs in its own folder and
draws its figures; a notebook finds none of the state another one left (the same process would
keep it), and torch's random numbers are those of a new process; a cell that runs past
``BOOK_CELL_TIMEOUT`` is interrupted and fails the run; no kernel outlives the run.
"""
import os
import subprocess
import time

import pytest

import kernel_forks
from tests.helpers.notebooks import ROOT, myst_page, outputs, run_pages

# Numbers drawn without a seed: a new process seeds torch and NumPy at random.
DRAW = "print(torch.rand(2).tolist())\nprint(numpy.random.rand(2).tolist())"

pytestmark = pytest.mark.skipif(not kernel_forks.available(), reason="not Linux: ordinary kernels")


def run(tmp_path, pages, timeout=None):
    paths = []
    for name, code in pages.items():
        (tmp_path / name).mkdir()
        paths.append(tmp_path / name / "page.md")
        paths[-1].write_text(myst_page("Page", *code), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(kernel_forks.ADDRESS, None)
    if timeout is not None:
        env["BOOK_CELL_TIMEOUT"] = str(timeout)
    return run_pages(tmp_path / "cache", paths, env), paths


def printed(outs):
    return "".join(out.get("text", "") for out in outs if out.get("name") == "stdout").split("\n")


def kernels_left():
    """The zygote, launchers and kernels still running (the kernels are forks of the zygote: its command line)."""
    return subprocess.run(["pgrep", "-f", kernel_forks.LAUNCHER], capture_output=True, text=True).stdout.split()


def test_forked_kernels_start_as_new_ones(tmp_path):
    first = ["import os, torch, numpy", "print(os.getcwd())", DRAW, "torch.leftover = 1\nleft = 2",
             "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([0, 1], [1, 0]);"]
    second = ["import os, torch, numpy", "print(os.getcwd())", DRAW,
              "print(hasattr(torch, 'leftover'), 'left' in globals())"]
    done, (a, b) = run(tmp_path, {"a": first, "b": second})
    assert done.returncode == 0, done.stdout + done.stderr
    out_a, out_b = outputs(tmp_path / "cache", a), outputs(tmp_path / "cache", b)
    assert printed(out_a)[0] == str(a.parent), out_a  # each kernel in its notebook's folder, as myst-nb runs it
    assert printed(out_b)[0] == str(b.parent), out_b
    assert any("image/png" in out.get("data", {}) for out in out_a), out_a  # matplotlib draws inline
    assert printed(out_b)[3] == "False False", printed(out_b)
    # Unseeded, each kernel draws its own numbers, as new processes do (not the zygote's, twice).
    assert printed(out_a)[1] != printed(out_b)[1], (printed(out_a), printed(out_b))  # torch
    assert printed(out_a)[2] != printed(out_b)[2], (printed(out_a), printed(out_b))  # NumPy
    assert not [out for out in out_a + out_b if out.get("name") == "stderr"], out_a + out_b
    assert "--existing" not in done.stdout + done.stderr, done.stdout  # the kernels' banner stays out of the log
    assert not kernels_left()


def test_a_cell_past_the_timeout_is_interrupted(tmp_path):
    start = time.monotonic()
    done, _ = run(tmp_path, {"slow": ["import time\ntime.sleep(120)"]}, timeout=3)
    assert done.returncode == 1, done.stdout + done.stderr
    assert time.monotonic() - start < 60, "the cell was not stopped at the timeout"
    assert "failed" in done.stderr and "timed out" in done.stderr.lower(), done.stderr
    time.sleep(1)
    assert not kernels_left()


def children(pid):
    return subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()


def eventually(condition, seconds=20):
    end = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def test_a_kernel_ends_with_its_launcher(tmp_path):
    # jupyter_client kills a kernel's process when the kernel does not shut down: here the
    # launcher, whose kernel is the zygote's child, not its own. The zygote then ends it.
    zygote = kernel_forks.start(str(tmp_path / "zygote"))
    try:
        command = kernel_forks.kernel_command(str(tmp_path / "kernel.json"), ["--IPKernelApp.log_level=ERROR"])
        launcher = subprocess.Popen(command, cwd=tmp_path)
        assert eventually(lambda: children(zygote.pid)), "no kernel started"
        launcher.kill()
        launcher.wait()
        assert eventually(lambda: not children(zygote.pid)), "the kernel outlived its launcher"
        assert zygote.poll() is None
    finally:
        os.environ.pop(kernel_forks.ADDRESS)
        zygote.stdin.close()
        zygote.wait(timeout=30)
