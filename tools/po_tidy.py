"""Wrap every Spanish catalog the same way (powrap, 79 columns) so diffs stay small.

Usage: python tools/po_tidy.py [locale/es/LC_MESSAGES] [--check]
"""

import subprocess
import sys
from pathlib import Path


def main(argv):
    check = "--check" in argv
    args = [a for a in argv[1:] if a != "--check"]
    po_dir = Path(args[0] if args else "locale/es/LC_MESSAGES")
    files = sorted(str(p) for p in po_dir.rglob("*.po"))
    if not files:
        print(f"no catalogs under {po_dir}")
        return 1
    cmd = [sys.executable, "-m", "powrap", "--quiet"]
    if check:
        cmd.append("--check")
    return subprocess.call(cmd + files)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
