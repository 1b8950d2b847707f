"""Command line: ``python -m attn.exercises --list`` and ``python -m attn.exercises check ID FILE.py``."""
import argparse
import importlib.util
import sys
from pathlib import Path

from . import _nearest, catalog, check, get, get_language
from ._messages import LANGUAGES, msg

HEADINGS = {
    "en": ("id", "chapter", "kind", "title"),
    "es": ("id", "capítulo", "tipo", "título"),
}
KINDS = {"en": {"write": "write", "bug_hunt": "bug hunt"}, "es": {"write": "escribir", "bug_hunt": "caza de errores"}}


def _list(lang):
    rows = [(ex.id, str(ex.chapter), KINDS[lang][ex.kind], ex.titles[lang]) for ex in catalog()]
    widths = [max(len(r[i]) for r in rows + [HEADINGS[lang]]) for i in range(3)]
    for row in [HEADINGS[lang]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[3])


def _load(path, name, lang):
    path = Path(path)
    if not path.is_file():
        raise SystemExit(msg("cli_no_file", lang, path=path))
    spec = importlib.util.spec_from_file_location(f"_attn_exercise_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(msg("cli_no_function", lang, path=path, name=repr(name)))
    return getattr(module, name)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m attn.exercises",
                                     description="Check your code against the book's exercises.")
    parser.add_argument("--list", action="store_true", help="list every exercise with its chapter and title")
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help="language of the messages (en, es)")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("check", help="check the function named after the exercise in FILE")
    p.add_argument("id", help="exercise id, e.g. ch05.causal_mask")
    p.add_argument("file", help="a Python file that defines the function (causal_mask for ch05.causal_mask)")
    p.add_argument("--lang", choices=LANGUAGES, default=None, dest="lang_sub")
    args = parser.parse_args(argv)
    lang = getattr(args, "lang_sub", None) or args.lang or get_language()
    if args.list:
        _list(lang)
        return 0
    if args.command == "check":
        try:
            ex = get(args.id)
        except ValueError:
            raise SystemExit(msg("cli_unknown_id", lang, id=repr(args.id), near=", ".join(_nearest(args.id)))) from None
        verdict = check(ex.id, _load(args.file, ex.name, lang), lang=lang)
        return 0 if verdict.passed else 1
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
