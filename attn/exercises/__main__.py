"""Command line: ``python -m attn.exercises --list`` and ``python -m attn.exercises check ID FILE.py``."""
import argparse
import importlib.util
import re
import string
import sys
from pathlib import Path

from . import _nearest, catalog, check, get, get_language
from ._messages import LANGUAGES, MESSAGES, msg

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


# The command line's own words; argparse's ("usage:", "options:") have no Spanish of their own.
HELP = {
    "en": {"usage": "usage: ", "positional": "positional arguments", "options": "options",
           "help": "show this help message and exit",
           "description": "Check your code against the book's exercises.",
           "list": "list every exercise with its chapter and title",
           "lang": "language of the messages (en, es)",
           "check": "check the function named after the exercise in FILE",
           "id": "exercise id, e.g. ch05.causal_mask",
           "file": "a Python file that defines the function (causal_mask for ch05.causal_mask)"},
    "es": {"usage": "uso: ", "positional": "argumentos posicionales", "options": "opciones",
           "help": "muestra esta ayuda y termina",
           "description": "Comprueba tu código con los ejercicios del libro.",
           "list": "enumera todos los ejercicios con su capítulo y su título",
           "lang": "idioma de los mensajes (en, es)",
           "check": "comprueba la función de FILE que lleva el nombre del ejercicio",
           "id": "identificador del ejercicio, p. ej. ch05.causal_mask",
           "file": "un archivo de Python que define la función (causal_mask para ch05.causal_mask)"},
}


def _speak(parser, words):
    """Give ``parser`` (the command's, or a subcommand's) its headings and -h in ``words``' language."""
    parser._positionals.title, parser._optionals.title = words["positional"], words["options"]
    parser.add_argument("-h", "--help", action="help", help=words["help"])
    return parser


def _formatter(words):
    class Formatter(argparse.HelpFormatter):
        def add_usage(self, usage, actions, groups, prefix=None):
            super().add_usage(usage, actions, groups, words["usage"] if prefix is None else prefix)

    return Formatter


# argparse's error lines, most specific first (the 3.14 suggestion before the plain invalid choice).
ARGPARSE = ("cli_argument", "cli_unrecognized", "cli_required", "cli_invalid_choice_closest", "cli_invalid_choice",
            "cli_expected_value", "cli_ambiguous", "cli_explicit_value")


def _argparse_line(parser, message, lang):
    """argparse's error ``message`` in ``lang``: matched against the English templates of ``ARGPARSE``
    (argparse formats the line before ``error()`` sees it) and filled in again in ``lang``, the
    subcommand named as the usage line shows it in both languages; a line no template knows passes
    unchanged."""
    for key in ARGPARSE:
        fields = string.Formatter().parse(MESSAGES[key]["en"])
        pattern = "".join(re.escape(text) + (f"(?P<{name}>.+?)" if name else "") for text, name, _, _ in fields)
        found = re.fullmatch(pattern, message, re.S)
        if found:
            kw = found.groupdict()
            if "message" in kw:
                kw["message"] = _argparse_line(parser, kw["message"], lang)
            if "name" in kw:  # the subcommand as the usage line shows it, {check}, not its dest "command"
                kw["name"] = next(("{" + ",".join(a.choices) + "}" for a in parser._actions
                                   if isinstance(a, argparse._SubParsersAction) and a.dest == kw["name"]), kw["name"])
            return msg(key, lang, **kw)
    return message


def _parser_class(lang):
    """An ``ArgumentParser`` whose own error lines ("unrecognized arguments", "invalid choice", a
    missing argument) speak ``lang``; its subcommands' parsers are of the same class."""

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            super().error(_argparse_line(self, message, lang))

    return Parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    # The language, known before parsing so that --help and argparse's errors speak it too.
    tokens = [t for a in argv for t in (a.split("=", 1) if a.startswith("--lang=") else [a])]
    given = [tokens[i + 1] for i, a in enumerate(tokens[:-1]) if a == "--lang" and tokens[i + 1] in LANGUAGES]
    speak = given[-1] if given else get_language()
    words = HELP[speak]
    parser = _speak(_parser_class(speak)(prog="python -m attn.exercises", description=words["description"],
                                         formatter_class=_formatter(words), add_help=False), words)
    parser.add_argument("--list", action="store_true", help=words["list"])
    parser.add_argument("--lang", choices=LANGUAGES, default=None, help=words["lang"])
    sub = parser.add_subparsers(dest="command")
    p = _speak(sub.add_parser("check", help=words["check"], formatter_class=parser.formatter_class, add_help=False),
               words)
    p.add_argument("id", help=words["id"])
    p.add_argument("file", help=words["file"])
    p.add_argument("--lang", choices=LANGUAGES, default=None, dest="lang_sub", help=words["lang"])
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
