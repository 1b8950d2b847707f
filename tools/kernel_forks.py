"""The chapters' kernels, forked from one process that has imported what they all import.

A notebook's Jupyter kernel is a new Python that imports ipykernel, torch and matplotlib,
about 3 s of a core, before its first cell runs; ``make html`` runs 21 of them.
``tools/execute_notebooks.py`` starts one *zygote* here: a Python that imports those and
runs nothing else (no notebook's code), then forks a kernel for each notebook. A forked
kernel starts in the state a new process reaches after the same imports (torch's random
seed its own), without their time; then it runs the notebook's cells as any kernel does
(tests/test_kernel_forks.py). In clean builds on 2 cores (``make clean && make html``, its
line "notebooks: 21 run in"), the notebooks took 146 s with new kernels, 113 to 130 s forked.

jupyter_client starts a kernel by running a command: here this file as a script,
``python tools/kernel_forks.py <zygote's socket> -f <connection file> ...``, a launcher
that imports nothing heavy. It asks the zygote for a kernel, passes on the signals
jupyter_client sends it (interrupt, terminate) and exits when the kernel does. The zygote
ends a kernel whose launcher dies, and every kernel left when the build that started it ends.
On Linux only; elsewhere the notebooks get ordinary kernels.
"""
import json
import os
import signal
import socket
import sys

LAUNCHER = os.path.abspath(__file__)
ADDRESS = "BOOK_KERNEL_ZYGOTE"  # the variable that holds the zygote's socket, for the launchers
# What every notebook imports (before its first cell: ipykernel; in it: torch, matplotlib).
# Not matplotlib's inline backend: imported, it hooks into the kernel's shell, which a
# forked kernel creates after the fork.
PRELOADED = ("ipykernel.kernelapp", "torch", "matplotlib", "matplotlib.pyplot")


def available():
    # Linux only: on macOS a process forked after loading system frameworks (torch loads
    # Accelerate) may crash, which is why Python's multiprocessing spawns there.
    return sys.platform.startswith("linux")


def start(address):
    """Start the zygote listening at ``address`` (a path); return it once it accepts kernels' requests."""
    import subprocess
    import time

    zygote = subprocess.Popen([sys.executable, LAUNCHER, "--zygote", address], stdin=subprocess.PIPE)
    while not os.path.exists(address):  # it renames its socket there once it listens
        if zygote.poll() is not None:
            raise RuntimeError(f"kernel_forks: the zygote exited with {zygote.returncode} before it listened")
        time.sleep(0.05)
    os.environ[ADDRESS] = address
    return zygote  # closing its stdin ends it


def kernel_command(connection_file, extra_arguments):
    """The command jupyter_client runs to start a kernel: this file, as the launcher."""
    return [sys.executable, LAUNCHER, os.environ[ADDRESS], "-f", connection_file, *extra_arguments]


def zygote(address):
    import importlib
    import selectors

    if sys.path[0] == os.path.dirname(LAUNCHER):
        del sys.path[0]  # as ipykernel's launcher does with its own folder
    os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")  # as ipykernel sets it
    for name in PRELOADED:
        importlib.import_module(name)
    server = socket.socket(socket.AF_UNIX)
    server.bind(address + ".new")
    server.listen()
    os.rename(address + ".new", address)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernels are reaped as they exit
    events = selectors.DefaultSelector()
    events.register(server, selectors.EVENT_READ)
    events.register(sys.stdin, selectors.EVENT_READ)
    while True:
        for key, _mask in events.select():
            if key.fileobj is server:
                conn, _ = server.accept()
                pid = fork_kernel(conn, events, server)
                conn.sendall(f"{pid}\n".encode())
                events.register(conn, selectors.EVENT_READ, pid)
                continue
            if key.fileobj is not sys.stdin:  # a launcher's end closed (jupyter_client ended it): its kernel ends
                _kill(key.data)
                events.unregister(key.fileobj)
                key.fileobj.close()
                continue
            for other in list(events.get_map().values()):  # the build closed our stdin, or ended
                _kill(other.data)
            os.unlink(address)
            return


def _kill(pid):
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it exited


def fork_kernel(conn, events, server):
    """Read a launcher's request on ``conn``, fork the kernel it asks for; its process id."""
    data, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    while not data.endswith(b"\n"):
        data += conn.recv(1 << 20)
    pid = os.fork()
    if pid == 0:
        events.close()
        server.close()
        conn.close()
        for fd, std in zip(fds, (0, 1, 2)):  # the kernel's standard streams are the launcher's
            os.dup2(fd, std)
        kernel(json.loads(data))
    for fd in fds:
        os.close(fd)
    return pid


def kernel(request):
    """In the forked process: become the kernel a launcher asked for."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()  # out of the build's terminal, as jupyter_client starts a kernel
        # A new process draws torch's seed as it starts: so does each kernel, not the zygote's
        # (Python's random reseeds itself at a fork; the zygote never imports numpy.random).
        sys.modules["torch"].seed()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        from ipykernel.kernelapp import IPKernelApp

        app = IPKernelApp.instance()
        # Two settings ipykernel reads from the environment when imported (here, before the fork).
        app.parent_handle = int(os.environ.get("JPY_PARENT_PID") or 0)
        app.interrupt = int(os.environ.get("JPY_INTERRUPT_EVENT") or 0)
        app.initialize(request["argv"])
        app.start()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def launcher(address, argv):
    import time

    conn = socket.socket(socket.AF_UNIX)
    conn.connect(address)
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode() + b"\n"
    socket.send_fds(conn, [request], [0, 1, 2])
    pid = int(conn.makefile().readline())
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda signum, _frame: _forward(pid, signum))
    while True:  # until the kernel exits (it is the zygote's child, not ours: no wait())
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)


def _forward(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        sys.exit(0)


if __name__ == "__main__":
    if sys.argv[1] == "--zygote":
        zygote(sys.argv[2])
    else:
        launcher(sys.argv[1], sys.argv[2:])
