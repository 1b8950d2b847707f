"""One gallery run when make html builds the languages side by side (conf.py: gallery_lock).

sphinx-gallery writes its pages into docs/ when a build starts. While one Sphinx holds the lock,
another cannot take it; once the gallery is written (the lock's file closed) it can, even though
the gallery's worker processes, forked while the lock was held, still run (a lock that forked
processes inherit, such as flock's, kept the second build waiting until the first one ended).
"""
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fcntl")  # POSIX; on Windows the lock is skipped

ROOT = Path(__file__).resolve().parent.parent
HOLDER = """
import os, sys, time, types, pathlib
sys.path.insert(0, sys.argv[1])
import conf
conf.GALLERY_LOCK = pathlib.Path(sys.argv[2])
app = types.SimpleNamespace()
conf.gallery_lock(app)
if os.fork() == 0:  # a gallery worker, forked while the gallery runs
    time.sleep(20)
    os._exit(0)
print("held", flush=True)
sys.stdin.readline()
app.book_gallery_lock.close()  # the gallery is written (conf.py's builder-inited hook, priority 600)
print("released", flush=True)
sys.stdin.readline()
"""
# Another build: conf.py's gallery_lock, given 2 s to return (it waits while the lock is held).
OTHER = """
import os, sys, threading, types, pathlib
sys.path.insert(0, sys.argv[1])
import conf
conf.GALLERY_LOCK = pathlib.Path(sys.argv[2])
took = threading.Event()
threading.Thread(target=lambda: (conf.gallery_lock(types.SimpleNamespace()), took.set()), daemon=True).start()
os._exit(0 if took.wait(2) else 1)
"""


def other_build_gets_the_lock(path):
    return subprocess.run([sys.executable, "-c", OTHER, str(ROOT), str(path)], capture_output=True).returncode == 0


def test_one_build_at_a_time_runs_the_gallery(tmp_path):
    lock = tmp_path / "gallery.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(ROOT), str(lock)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not other_build_gets_the_lock(lock), "a second build ran the gallery beside the first"
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"
        assert other_build_gets_the_lock(lock), "the gallery's forked workers kept the lock: the other build waits"
    finally:
        holder.kill()
        holder.wait()
