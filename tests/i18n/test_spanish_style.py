"""The Spanish catalogs follow the translation guide (``locale/README.md``).

Each rule of the guide that a program can check is checked here on every
message of every catalog, so the pages that later chapters add are held to
it as soon as their catalogs exist.  The same rules are checked on the built
pages by ``tests/book/test_spanish_pages.py``.  No build is needed.
"""

import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest
from book_languages import TRANSLATION

pytestmark = pytest.mark.spelling  # make test-spelling

ROOT = Path(__file__).resolve().parents[2]
PO_DIR = ROOT / "locale" / TRANSLATION / "LC_MESSAGES"
CATALOGS = sorted(PO_DIR.rglob("*.po"))


def _name(path):
    return path.relative_to(PO_DIR).with_suffix("").as_posix()


def messages():
    """``(catalog, entry)`` for every translated message of the page catalogs."""
    for path in CATALOGS:
        if path.name == "sphinx.po":
            continue
        for e in polib.pofile(str(path)):
            if not e.obsolete and e.msgstr:
                yield _name(path), e


def test_the_catalogs_have_messages():
    # Guards the loop: an empty scan would pass every check below.
    assert sum(1 for _ in messages()) > 1500


# -- chapter references ----------------------------------------------------------------

# {ref}`ch-08` (MyST) or :ref:`ch-08` (reST: the gallery and the API) with no text of
# its own prints the chapter's title; so does a reference to a gallery example.
BARE_REF = re.compile(r"(?:\{ref\}|:ref:)`(?P<label>ch-\d+|sphx_glr_[\w.]+)`")
# {ref}`capítulo 8 <ch-08>`, or the number alone after «los capítulos».
NAMED_REF = re.compile(r"(?:\{ref\}|:ref:)`(?P<text>[^`<]*?)\s*<ch-(?P<n>\d+)>`")
NAMED_TEXT = re.compile(r"(?:[Cc]apítulo )?(?P<n>\d+)")


def reference_slips(text):
    """What is wrong with the chapter references of one Spanish message.

    A bare reference prints a title: it may stand alone (a list entry, a table
    cell), open the message before a colon (``{ref}`ch-02`: la analogía…``), or
    sit in «…».  Anywhere else Spanish needs «el capítulo 8»:
    ``el {ref}`capítulo 8 <ch-08>```.  A reference with its own text names the
    chapter by its number, the same number as its label.
    """
    slips = []
    text = re.sub(r"``.*?``", " ", text)  # a role quoted as code is not a reference
    for m in BARE_REF.finditer(text):
        before, after = text[: m.start()].rstrip(), text[m.end():].lstrip()
        if before.endswith("«") and after.startswith("»"):
            continue
        if not before and (not after or after[0] in ":."):
            continue
        slips.append(f"bare {m[0]} after {before[-25:]!r}")
    for m in NAMED_REF.finditer(text):
        named = NAMED_TEXT.fullmatch(m["text"])
        if not named or int(named["n"]) != int(m["n"]):
            slips.append(f"{m[0]}: the text should be «capítulo {int(m['n'])}»")
    return slips


@pytest.mark.parametrize(
    "text",
    [
        "El {ref}`ch-08` da a la atención una noción del orden.",
        "con la tabla sinusoidal del {ref}`ch-08` sumada a la entrada",
        "Acompaña al :ref:`ch-14`.",
        "(la vía rápida o la explícita, como en {ref}`ch-05`)",
        "{ref}`ch-04` explica la escala; {ref}`ch-05`, la máscara.",
        "El ejemplo de la galería {ref}`sphx_glr_auto_examples_plot_02_simplified_attention.py` dibuja",
        "como en el {ref}`capítulo 9 <ch-08>`",
        "como en el {ref}`chapter 8 <ch-08>`",
    ],
)
def test_reference_slips_are_found(text):
    assert reference_slips(text), text


@pytest.mark.parametrize(
    "text",
    [
        "{ref}`ch-02`",
        "{ref}`ch-01`: la analogía de la búsqueda.",
        "El {ref}`capítulo 8 <ch-08>` da a la atención una noción del orden.",
        "en los capítulos {ref}`4 <ch-04>` y {ref}`7 <ch-07>`",
        "El ejemplo de la galería «{ref}`sphx_glr_auto_examples_plot_02_simplified_attention.py`» dibuja",
        "Acompaña al :ref:`capítulo 14 <ch-14>`.",
        "su documentación está en la {ref}`página de la API <api>`",
        "Conserva el marcado: roles como ``{ref}`ch-05` `` y ``{term}`query` ``.",
    ],
)
def test_good_references_pass(text):
    assert not reference_slips(text), reference_slips(text)


def test_chapter_references_read_as_spanish():
    found = [
        f"{name}: {slip}"
        for name, e in messages()
        for slip in reference_slips(e.msgstr)
    ]
    assert not found, (
        "chapter references that print a title inside a Spanish sentence "
        "(write el {ref}`capítulo N <ch-NN>`, or the title in «…»):\n" + "\n".join(found)
    )


# -- numbers ---------------------------------------------------------------------------

# The parts of a message: math ($…$, :math:`…`), code and roles (``…``, `…`,
# {ref}`…`, :class:`…`) and links, and the prose around them.
SEGMENT = re.compile(
    r"(?P<math>:math:`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$)"
    r"|(?P<code>``.*?``|\{[a-z:-]+\}`[^`]*`|:[a-z:]+:`[^`]*`|`[^`]*`|https?://\S+)",
    re.S,
)
# «ejercicio 2.4», «Python 3.11»: numbering and versions, not decimals.
NUMBERING = re.compile(r"(?:[Ee]jercicios?|[Ss]ecci[oó]n|[Ff]igura|[Tt]abla|Python|§)\s*$")
NNBSP = "\u202f"  # narrow no-break space: 20 000


def segments(text):
    """``(kind, text)`` pieces of a message: ``"prose"``, ``"math"`` or ``"code"``."""
    pos = 0
    for m in SEGMENT.finditer(text):
        if m.start() > pos:
            yield "prose", text[pos:m.start()]
        yield m.lastgroup, m[0]
        pos = m.end()
    if pos < len(text):
        yield "prose", text[pos:]


def number_slips(text):
    """The numbers of one Spanish message written against the guide's rules.

    Decimal comma in prose (0,77) and in formulas (``0{,}77``); no space in a
    four-digit number (1024); a narrow no-break space from five digits (20 000,
    U+202F), ``\\,`` in a formula (``10\\,000``); a semicolon between numbers that
    have a decimal comma (``1; 0,1; 0,01``).  Code and printed values keep Python's
    form (``0.2379``, ``1e-5``).
    """
    slips = []
    prose_before = ""
    for kind, part in segments(text):
        if kind == "prose":
            for m in re.finditer(r"(?<![\w.,])\d+\.\d+(?!\w|\.\d)", part):
                if not NUMBERING.search(prose_before + part[: m.start()]):
                    slips.append(f"decimal point {m[0]!r} (write {m[0].replace('.', ',')})")
            for m in re.finditer(r"(?<![\w.,\u00a0\u202f])\d{5,}(?!\d)", part):
                slips.append(f"{m[0]!r} without a narrow no-break space (U+202F) between thousands")
            for m in re.finditer(r"(?<![\d.,\u00a0\u202f])\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?!\d)", part):
                digits = re.sub(r"\D", "", m[0])
                if len(digits) == 4:
                    slips.append(f"{m[0]!r}: no space in a four-digit number (write {digits})")
                elif re.search(r"[ \u00a0]", m[0]):
                    slips.append(f"{m[0]!r}: thousands take a narrow no-break space (U+202F)")
            for m in re.finditer(r"\d, \d+,\d|\d+,\d+, \d", part):
                slips.append(f"{m[0]!r}: a list of decimals takes semicolons (1; 0,1; 0,01)")
            prose_before += part
        elif kind == "math":
            if re.search(r"\d\.\d", part):
                slips.append(f"decimal point in {part!r} (write 0{{,}}5)")
            for m in re.finditer(r"(?<![\d{},\\])\d{5,}(?!\d)", part):
                slips.append(f"{m[0]!r} in {part!r}: group thousands with \\, (10\\,000)")
            for m in re.finditer(r"(?<![\d,])\d\\,\d{3}(?!\d|\\,)", part):
                slips.append(f"{m[0]!r} in {part!r}: no space in a four-digit number")
            for m in re.finditer(r"\d\{,\}\d{3}\{,\}\d{3}", part):
                slips.append(f"{m[0]!r} in {part!r}: a comma groups thousands in English only (write \\,)")
            for m in re.finditer(r"\d, \d+\{,\}\d|\d\{,\}\d+, \d", part):
                slips.append(f"{m[0]!r} in {part!r}: a list of decimals takes semicolons (1;\\ 0{{,}}1)")
        else:
            prose_before = ""
    return slips


@pytest.mark.parametrize(
    "text",
    [
        "(k₁, puntuación 0.90)",
        "el peso más grande ya promedia 0.88.",
        "con $p = 0.5$, sobre una matriz",
        "con :math:`1/6 \\approx 0.17`",
        "con $\\theta_i = 1, 0{,}1, 0{,}01$",
        "(0,97 a distancia 1, 0,66 a distancia 10)",
        "una secuencia de 8\u00a0192 tokens",
        "unos 122\u00a0000 tokens",
        "es decir, 787 456 con",
        "sobre 20000 pares",
        "$10000^{-2i/d}$",
        "$4\\,096$",
        "$1{,}280{,}000$",
    ],
)
def test_number_slips_are_found(text):
    assert number_slips(text), text


@pytest.mark.parametrize(
    "text",
    [
        "(k₁, puntuación 0,90); el peso más grande ya promedia 0,88.",
        "con $p = 0{,}5$ y $\\theta_i = 1;\\ 0{,}1;\\ 0{,}01$, sobre 20\u202f000 pares",
        "una secuencia de 8192 tokens, $T = 8192$, $10\\,000^{-2i/d}$, $1\\,280\\,000$",
        "(ejercicio 2.4); Ejercicio 15.1; con Python 3.11",
        "imprime ``0.2379``; `rtol=1.3e-6` y `atol=1e-5`; (Vaswani et al., 2017)",
        "la cuarta ($k_4$, puntuación 0,84), 1, 2 y 3",
    ],
)
def test_good_numbers_pass(text):
    assert not number_slips(text), number_slips(text)


def test_numbers_follow_the_spanish_rules():
    found = [f"{name}: {slip}" for name, e in messages() for slip in number_slips(e.msgstr)]
    assert not found, "numbers written against locale/README.md («Numbers»):\n" + "\n".join(found)


# -- foreign words ---------------------------------------------------------------------

# English words the Spanish edition keeps, not adapted to Spanish: in italics wherever
# the prose uses them (RAE), *kernel*, *prompt*; in code font where they name code.
# Terms the book adopts as Spanish words are written plainly: token, embedding,
# softmax, dropout, Transformer (locale/README.md, «Terms and foreign words»).
FOREIGN = re.compile(
    r"(?<![\w-])(kernels?|prompts?|one-hot|strides?|logits|broadcasting|feed-forward|pre-norm|post-norm"
    r"|prefill|hardware|teacher forcing|frameworks?"
    r"|in situ|a priori"  # Latin locutions: italics too (RAE), ***in situ*** when bold
    r"|floats?)(?![\w-])",  # Python's type: ``float`` in code font (float32 is a dtype, written plainly)
    re.I,
)
# Spans where a word is not used in the prose: code, math, roles, «quotes», *italics*.
NOT_PLAIN = re.compile(
    r":math:`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$|``.*?``|\{[a-z:-]+\}`[^`]*`|:[a-z:]+:`[^`]*`|`[^`]*`"
    # *italics* and ***bold italics***, not **bold** alone
    r"|https?://\S+|«[^»]*»|(?<!\*)\*(?:\*\*)?[^*\s][^*]*\*(?:\*\*)?(?!\*)",
    re.S,
)


def plain_foreign_words(text):
    return FOREIGN.findall(NOT_PLAIN.sub(" ", text))


def test_plain_foreign_words_are_found():
    assert plain_foreign_words("un kernel fusionado y un prompt de 4 tokens, casi one-hot") == [
        "kernel", "prompt", "one-hot"]
    # Part III's words: the **prefill** in bold only is still plain.
    assert plain_foreign_words("El **prefill** lee el *prompt*; el hardware paralelo; usa teacher forcing") == [
        "prefill", "hardware", "teacher forcing"]
    assert not plain_foreign_words("El ***prefill*** lee; el *hardware*; *teacher forcing*")
    # Latin, and bold alone: chapter 5 said «rellena las puntuaciones **in situ**».
    assert plain_foreign_words("rellena las puntuaciones **in situ**; a priori") == ["in situ", "a priori"]
    assert not plain_foreign_words("rellena las puntuaciones ***in situ***, *in situ* y *a priori*")
    # Part I's: chapter 11 said «código ejecutable en varios frameworks».
    assert plain_foreign_words("en varios frameworks") == ["frameworks"]
    assert not plain_foreign_words("en varios *frameworks*")
    assert not plain_foreign_words(
        "un *kernel* fusionado, el *prompt*, `stride`, «one-hot», :func:`kernel`, $\\text{kernel}$")
    assert plain_foreign_words("desborda un float de 32 bits; un float en ``[0, 1]``") == ["float", "float"]
    assert not plain_foreign_words("un ``float`` en ``[0, 1]``, en float32 y float64")


def test_foreign_words_are_in_italics():
    # A glossary term whose Spanish name is the English word (``prefill``) is a name, not prose.
    found = [
        f"{name}: {w!r} in {e.msgstr[:70]!r}"
        for name, e in messages()
        if e.msgstr != e.msgid
        for w in plain_foreign_words(e.msgstr)
    ]
    assert not found, "English words in Spanish prose go in italics (*kernel*), names of code in code font (``float``):\n" + "\n".join(found)


# -- compounds ------------------------------------------------------------------------

# English joins two nouns with an en dash («encoder–decoder»); Spanish with a hyphen (RAE,
# *Ortografía* 2010: «relación calidad-precio», «codificador-decodificador»).  A range of
# numbers (15–19, ``01``–``28``) is not a compound.  «…» counts: a quoted name is Spanish too.
DASH_COMPOUND = re.compile(r"[^\W\d_]–[^\W\d_]")


def dash_slips(text):
    prose = "".join(part for kind, part in segments(text) if kind == "prose")
    return DASH_COMPOUND.findall(prose)


def test_dash_slips_are_found():
    assert dash_slips("un codificador–decodificador diminuto, «atención codificador–decodificador»") == [
        "r–d", "r–d"]
    assert not dash_slips("un codificador-decodificador; de 15–19 a 3–7; días ``01``–``28``; $i–j$")


def test_compounds_take_a_hyphen():
    found = [f"{name}: {slip!r} in {e.msgstr[:70]!r}" for name, e in messages() for slip in dash_slips(e.msgstr)]
    assert not found, "two words are joined by a hyphen in Spanish (codificador-decodificador):\n" + "\n".join(found)


# -- register and quotation marks --------------------------------------------------------

# «Tú» (locale/README.md, «Register»): the pronoun «usted», and the «usted» imperatives
# that open a sentence where the book writes «Compruébalo», «Observa», «Calcula».
USTED = re.compile(
    r"\b(?:[Uu]sted|[Uu]stedes)\b|(?:^|[.:;!?]\s+|[¿¡(]\s*)(?:Compruebe|Observe|Fíjese|Ejecute|Escriba|Recuerde|"
    r"Pruebe|Vea|Considere|Calcule|Demuestre|Explique|Utilice|Cambie|Quite|Añada|Elija)\b"
)


def register_slips(text):
    return [m[0].strip() for m in USTED.finditer(NOT_PLAIN.sub(" ", text))]


def quote_slips(text):
    """Quotation marks other than «…» in the prose (“…” may only nest inside «…»)."""
    prose = re.sub(r"«[^»]*»", " ", NOT_PLAIN.sub(" ", re.sub(r"\*[^*\s][^*]*\*", " ", text)))
    return re.findall(r"[\"“”]", prose)


def test_register_and_quote_slips_are_found():
    assert register_slips("Compruebe que la suma es 1. Usted puede verlo.") == ["Compruebe", "Usted"]
    assert not register_slips("Compruébalo. Observa que `usted` no sale; que se observe.")
    assert quote_slips('la oración "Your journey" y “otra”') == ['"', '"', "“", "”"]
    assert not quote_slips('la oración «Your journey», «un “paso”», `"ibhd"` y $x$')


def test_the_pages_say_tu():
    found = [f"{name}: {slip!r} in {e.msgstr[:70]!r}" for name, e in messages() for slip in register_slips(e.msgstr)]
    assert not found, "the book says «tú» to its reader:\n" + "\n".join(found)


def test_quotes_are_spanish():
    found = [f"{name}: {e.msgstr[:90]!r}" for name, e in messages() if quote_slips(e.msgstr)]
    assert not found, "quotation marks in Spanish prose are «…» (and “…” inside them):\n" + "\n".join(found)


# -- dividir entre ---------------------------------------------------------------------

# The guide writes «dividir entre» (locale/README.md, terms): terminology.csv rejects
# «divide por», but the slip also comes with words in between («divide ese paso por una
# estimación»).  «por la mitad» (in half) and «por bloques» (by) are not divisions by a number.
DIVIDED_BY = re.compile(
    r"\bdivid(?:e|en|ir|imos|iendo|ida|ido|idas|idos)\s+(?:[^\s.,;:()«»]+\s+){0,4}?por\s+(?!la mitad|bloques?\b)",
    re.I,
)


def divided_by_slips(text):
    prose = "".join(part for kind, part in segments(text) if kind == "prose")
    return [m[0].strip() for m in DIVIDED_BY.finditer(prose)]


def test_divided_by_slips_are_found():
    assert divided_by_slips("Adam divide ese paso por una estimación; divide cada posición por el cociente") == [
        "divide ese paso por", "divide cada posición por"]
    assert not divided_by_slips(
        "Adam divide ese paso entre una estimación; divide la secuencia por la mitad; se divide por bloques; "
        "divide las claves en bloques, y por eso")


def test_division_is_entre():
    found = [f"{name}: {slip!r} in {e.msgstr[:70]!r}" for name, e in messages() for slip in divided_by_slips(e.msgstr)]
    assert not found, "Spanish divides «entre» (locale/README.md, «divided by»):\n" + "\n".join(found)


# -- a closing parenthesis before the period ----------------------------------------------

# RAE (Ortografía 2010): the period of a sentence goes after the closing parenthesis, even
# when the parenthesis holds a whole sentence: «(Las líneas `assert` lo comprueban).»  An
# abbreviation keeps its own period («Vaswani et al.)»), an ellipsis is not a period, and
# code (``.view(...)``) is not prose.
PERIOD_IN_PAREN = re.compile(r"(?<!\.)(?<!\bal)(?<!\bej)(?<!\betc)\.\)")


def paren_period_slips(text):
    prose = "".join(part for kind, part in segments(text) if kind == "prose")
    return [prose[max(0, m.start() - 20):m.end()] for m in PERIOD_IN_PAREN.finditer(prose)]


def test_paren_period_slips_are_found():
    assert len(paren_period_slips(
        "(Esta combinación es lo que permite repartir una caché.) El capítulo (véase el {ref}`capítulo 14 <ch-14>`.)"
    )) == 2
    assert not paren_period_slips(
        "(Las líneas `assert` lo comprueban). (Vaswani et al.) (p. ej.) (la primera, la tercera...) "
        "con `.view(...)` y ``explore(...)``")


def test_the_period_follows_the_parenthesis():
    found = [f"{name}: {slip!r}" for name, e in messages() for slip in paren_period_slips(e.msgstr)]
    assert not found, "the period goes after the closing parenthesis (RAE):\n" + "\n".join(found)


# -- the package's attention classes are «el módulo» ---------------------------------------

# A class named ``…Attention`` is a module: «un `GroupedQueryAttention`», «el
# `MultiHeadAttention`», as the book writes every other time (the attention it computes is
# «la atención de consultas agrupadas»).  ``KVCache`` is «la caché»: not matched.
FEMININE_MODULE = re.compile(r"\b(?:[Uu]na|[Ll]a)\s+(?::class:)?``?~?(?:attn\.)?[A-Z]\w*Attention``?")


def test_attention_classes_are_masculine():
    assert FEMININE_MODULE.findall("construye una `GroupedQueryAttention` y la :class:`attn.MultiHeadAttention`")
    assert not FEMININE_MODULE.search(
        "construye un `GroupedQueryAttention`, el :class:`attn.MultiHeadAttention`, una :class:`attn.KVCache`, "
        "la `scaled_dot_product_attention` de PyTorch")
    found = [f"{name}: {m[0]!r}" for name, e in messages() for m in FEMININE_MODULE.finditer(e.msgstr)]
    assert not found, "a class of the package is «el módulo»: un `GroupedQueryAttention`:\n" + "\n".join(found)


# -- rules of the November 2026 native reading (shared/reviews/spanish-2026-11-28.md, 4.1) -------

def prose_of(text):
    """The prose of a message: no code, math or roles (``segments``)."""
    return "".join(part if kind == "prose" else " ` " for kind, part in segments(text))


def slips_of(pattern, text):
    return [m[0] for m in pattern.finditer(prose_of(text))]


def catalog_slips(finder):
    return [f"{name}: {slip!r} in {e.msgstr[:70]!r}" for name, e in messages() for slip in finder(e.msgstr)]


# «un peso exactamente 0» is the English construction ("weight exactly 0"): Spanish needs the
# preposition, «un peso de exactamente 0», or says «un peso nulo».
WEIGHT_EXACTLY = re.compile(r"\bpesos?\s+exactamente\s+(?:0|cero|1|uno)\b", re.I)


def weight_exactly_slips(text):
    return slips_of(WEIGHT_EXACTLY, text)


# A share of a whole is a percentage in Spanish prose: «más del 60 % de su peso», not «más de
# 0,6 de su peso»; and a range of shares after a weight, «(entre el 60 % y el 65 %)».
SHARE = re.compile(
    r"\b(?:más|menos|cerca|alrededor)\s+de\s+\d+,\d+\s+de\s+(?:su|sus|todo su)\s+peso\b"
    r"|\b\d+,\d+\s+de\s+su\s+peso\b",
    re.I,
)
SHARE_RANGE = re.compile(r"\(\s*entre\s+\d+,\d+\s+y\s+\d+,\d+\s*[,;)]")


def share_slips(text):
    # a range of decimals in parentheses is a share when the message speaks of weight
    ranges = slips_of(SHARE_RANGE, text) if re.search(r"\bpesos?\b", prose_of(text)) else []
    return slips_of(SHARE, text) + ranges


# *solo* after a participle or a noun reads as "only" as well as "alone": «cada *prompt*
# ejecutado solo» -> «por separado», «lo que obtendría solo» -> «por sí solo».
ALONE = re.compile(
    r"\b(?:ejecutad|procesad|tomad|usad|calculad|evaluad)[oa]s?\s+sol[oa]s?\b"
    r"|\bobtendría\s+solo\b"
    r"|\b(?:que|como)\s+\w+\s+(?:cada\s+)?\*?\w+\*?\s+sol[oa]s?\s*[:.,;]",
    re.I,
)


def alone_slips(text):
    return slips_of(ALONE, text)


# Three dots are an ellipsis only in code; Spanish prose writes the one character «…».
def ellipsis_slips(text):
    return re.findall(r"\S{0,12}\.\.\.\S{0,3}", prose_of(text))


def test_the_review_slips_are_found():
    # The wording the catalogs had before the November 2026 reading.
    assert weight_exactly_slips("las entradas ocultas reciben un peso exactamente 0, y la softmax") == [
        "peso exactamente 0"]
    assert not weight_exactly_slips("reciben un peso de exactamente 0; un peso nulo; los pesos valen exactamente 0")
    assert share_slips("cada una da más de 0,6 de su peso al token que sigue") == ["más de 0,6 de su peso"]
    assert len(share_slips(
        "una cabeza lee la clave 0 (más de 0,9 de su peso) y la otra lee la clave $t-1$ (entre 0,6 y 0,65, de nuevo"
    )) == 2
    assert not share_slips(
        "más del 60 % de su peso; (entre el 60 % y el 65 %, de nuevo); la mayor parte de su peso (0,97 a distancia 1)")
    assert alone_slips("con los de cada *prompt* ejecutado solo: sin máscara") == ["ejecutado solo"]
    assert alone_slips("los *logits* de los *prompts* ejecutados solos, salvo") == ["ejecutados solos"]
    assert alone_slips("que obtendría solo hacen falta dos cosas") == ["obtendría solo"]
    assert alone_slips("los mismos tokens que escribe cada *prompt* solo:") == ["que escribe cada *prompt* solo:"]
    assert not alone_slips(
        "ejecutado por separado; lo que obtendría por sí solo; que escribe cada *prompt* por separado: "
        "solo con la máscara; una cabeza sola no puede; se ejecuta solo en la CPU")
    assert ellipsis_slips("claves que ahora dicen «el token anterior a mí era...». La") == ["era...»."]
    assert not ellipsis_slips("«era…»; `... A B ... A`; ``.view(...)``; $1, \\ldots, T$; (la primera, la tercera…)")


@pytest.mark.parametrize(
    "finder, rule",
    [
        (weight_exactly_slips, "«un peso de exactamente 0» (or «un peso nulo»), not «un peso exactamente 0»"),
        (share_slips, "a share of the weight is a percentage: «más del 60 % de su peso»"),
        (alone_slips, "«solo» after a participle reads as 'only': «ejecutado por separado», «por sí solo»"),
        (ellipsis_slips, "an ellipsis in prose is one character, «…»"),
    ],
    ids=["weight-exactly", "shares", "solo", "ellipsis"],
)
def test_the_review_rules_hold(finder, rule):
    found = catalog_slips(finder)
    assert not found, f"{rule} (locale/README.md):\n" + "\n".join(found)


# An English name mentioned in «…» is code or a label: ``rotate_half``, ``math``, in code font
# (locale/README.md, «Terms and foreign words»).  A quotation with capitals is a title or an
# example sentence («Your journey starts with one step»); a term the book introduces in «…» on
# purpose is listed here.
QUOTED_ENGLISH_OK = {"uptraining", "pre-norm", "post-norm"}


def lowercase_quotes(text):
    return [q for q in re.findall(r"«([^»]*)»", text) if re.fullmatch(r"[a-z][a-z _-]+", q) and q not in QUOTED_ENGLISH_OK]


def not_spanish(words):
    """The words hunspell's es_ES dictionary does not know."""
    proc = subprocess.run(["hunspell", "-d", "es_ES", "-l"], input="\n".join(words), capture_output=True, text=True)
    return set(proc.stdout.split())


def english_quotes(texts):
    quotes = [(where, q) for where, text in texts for q in lowercase_quotes(text)]
    unknown = not_spanish(sorted({w for _, q in quotes for w in re.findall(r"[a-z]+", q)}))
    return [(where, q) for where, q in quotes if all(w in unknown for w in re.findall(r"[a-z]+", q))]


needs_hunspell = pytest.mark.skipif(
    shutil.which("hunspell") is None or not Path("/usr/share/hunspell/es_ES.dic").is_file(),
    reason="needs Debian's hunspell and hunspell-es (see README)",
)


@needs_hunspell
def test_english_quotes_are_found():
    texts = [("ch15", "la disposición «rotate half» que usamos aquí"), ("ch11", "una alternativa «math» escrita"),
             ("ok", "«enmascarar y luego escalar», «pre-norm», «Your journey starts with one step», `rotate_half`")]
    assert english_quotes(texts) == [("ch15", "rotate half"), ("ch11", "math")]


@needs_hunspell
def test_english_names_are_code_not_quotes():
    found = english_quotes((name, e.msgstr) for name, e in messages() if e.msgstr != e.msgid)
    assert not found, "an English name mentioned in «…» goes in code font (``rotate_half``):\n" + "\n".join(
        f"{name}: «{q}»" for name, q in found)


# -- every module of the package is «el módulo» --------------------------------------------------

def package_modules():
    """The names of the ``nn.Module`` subclasses of ``attn`` (the caches, «la caché», are not modules)."""
    import inspect

    import attn  # noqa: F401
    import torch

    names = set()
    for path in sorted((ROOT / "attn").rglob("*.py")):
        if path.name == "__main__.py":  # a command line runs when imported
            continue
        module_name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        module = __import__(module_name, fromlist=["_"])
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, torch.nn.Module) and obj.__module__.startswith("attn"):
                names.add(name)
    return names


def feminine_modules(text, names):
    pattern = re.compile(
        r"\b(?:[Uu]nas?|[Ll]as?|[Ee]sta|[Ee]sas?)\s+(?::class:)?``?~?(?:attn\.)?(?:[\w.]+\.)?(?P<name>"
        + "|".join(sorted(names, key=len, reverse=True)) + r")``?"
    )
    return [m[0] for m in pattern.finditer(text)]


def test_every_package_module_is_masculine():
    names = package_modules()
    assert {"AttentionLayer", "AttentionOnly", "TinyLM", "MultiHeadAttention"} <= names, names
    assert not {"KVCache", "PagedKVCache"} & names
    assert feminine_modules("la capa ``layers`` guarda las :class:`AttentionLayer`.", names) == [
        "las :class:`AttentionLayer`"]
    assert not feminine_modules("los :class:`AttentionLayer`, el `TinyLM`, una `attn.KVCache`", names)
    found = [f"{name}: {slip!r}" for name, e in messages() for slip in feminine_modules(e.msgstr, names)]
    assert not found, "a class of the package is «el módulo»: los :class:`AttentionLayer`:\n" + "\n".join(found)


# -- one mood in the API's argument descriptions ---------------------------------------------------

# "also return the weights", "add a bias", "draw a colour bar": the API page describes what an
# argument makes the function do in the third person, «devuelve también los pesos», «añade un
# sesgo», never the infinitive («devolver también»).  búfer is a noun.
INFINITIVE_START = re.compile(r"^(?!búfer\b)([a-záéíóúñ]+(?:ar|er|ir))\b")


def infinitive_descriptions(entries):
    return [
        e.msgstr[:60] for e in entries
        if re.match(r"[a-z]", e.msgid) and INFINITIVE_START.match(e.msgstr)
    ]


def test_api_descriptions_are_in_one_mood():
    entries = [e for name, e in messages() if name == "api"]
    old = [polib.POEntry(msgid="also return the cross-attention weights.", msgstr="devolver también los pesos."),
           polib.POEntry(msgid="buffer, bool", msgstr="búfer booleano"),
           polib.POEntry(msgid="add a bias.", msgstr="añade un sesgo.")]
    assert infinitive_descriptions(old) == ["devolver también los pesos."]
    found = infinitive_descriptions(entries)
    assert not found, "the API's argument descriptions say «devuelve también», not «devolver también»:\n" + "\n".join(
        found)


# -- words in inline formulas ------------------------------------------------------------------

# An inline formula is part of its message, so its words are translated with it
# ($P + \text{profundidad}$); a word no Spanish message uses outside formulas, and no
# name of MATH_NAMES, is English left behind.  The built pages are checked the same way
# (tests/book/test_spanish_pages.py, test_no_english_in_formulas), after a build.


def math_slips(text, spanish):
    from tests.helpers.text import MATH_NAMES, latex_math_words

    return sorted({w for w in latex_math_words(text) if w not in MATH_NAMES and w.lower() not in spanish})


@pytest.fixture(scope="module")
def spanish_prose():
    from translation_check import prose_words

    return prose_words(PO_DIR)


def test_math_slips_are_found(spanish_prose):
    text = (r"en la posición $P + \text{depth}$, con $P_\text{seen}$ y :math:`\mathrm{score}_\text{row}`; "
            r"bien: $P + \text{profundidad}$, $\mathrm{softmax}(x)$, $d_\text{head}$, $P_S$")
    assert math_slips(text, spanish_prose) == ["depth", "row", "score", "seen"]


def test_inline_formulas_are_translated(spanish_prose):
    found = [(name, math_slips(e.msgstr, spanish_prose)) for name, e in messages()]
    found = [(name, words) for name, words in found if words]
    assert not found, (
        "English words in the inline formulas of Spanish messages (translate them, or write the formula "
        "with notation only):\n" + "\n".join(f"{name}: {words}" for name, words in found)
    )
