"""The bibliography: how entries and citations read, in both languages.

A local Sphinx extension (``extensions`` in ``conf.py``, after
``sphinxcontrib.bibtex``, which does the work: ``docs/references.bib`` holds the
entries, ``{cite:t}`key``` and ``{cite:p}`key``` cite them, and
``docs/bibliography.md`` lists them all).  What this file adds is the two styles
that extension takes by name, so that nothing it writes is an English word the
Spanish book would have to show:

* ``book`` (``bibtex_default_style``), the entries: ``Bahdanau, D., Cho, K. &
  Bengio, Y. (2015). Title. Venue. arXiv:1409.0473``, with the DOI, the arXiv
  identifier or the publisher's address as a plain link (nothing is fetched);
  no "In", "pages", "URL:" or "and" as pybtex's own styles write;
* ``book`` (``bibtex_reference_style``), the citations: ``Vaswani et al. (2017)``,
  ``(Milakov & Gimelshein, 2018)``, ``(Beltagy et al., 2020; Child et al., 2019)``.

and one post-transform, :class:`EntriesAsList`: the page lists its entries without the
numbers docutils gives citations, and keeps them in place in the PDF.

:func:`citation_text` writes a citation as the page shows it, for the chapters'
notebooks (``chapter_notebooks``), where no Sphinx role is left, with the ``book``
referencing style's own templates.
"""

import dataclasses
import functools
from pathlib import Path

import pybtex.plugin
import sphinxcontrib.bibtex.plugin
from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from pybtex.richtext import BaseMultipartText, Text
from pybtex.style.formatting import BaseStyle, toplevel
from pybtex.style.template import field, href, join, node, optional, sentence, tag
from sphinxcontrib.bibtex.domain import SphinxReferenceInfo
from sphinxcontrib.bibtex.richtext import BaseReferenceText
from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

# The bibliography file, relative to the repository (conf.py: bibtex_bibfiles).
BIBFILE = "docs/references.bib"
BIBPATH = Path(__file__).resolve().parents[2] / BIBFILE

# Between authors, in entries and citations: a symbol, the same in every language.
AND = " & "
ET_AL = " et al."  # Latin, read as such in English and in Spanish
# An entry lists at most this many authors; longer lists show the first ones, et al.
MAX_AUTHORS = 8
SHOWN_IF_CUT = 6


# -- the entries ---------------------------------------------------------------------------------


@node
def authors(children, context):
    """``Last, F., Last, F. & Last, F.``; a long list (or one ending in ``others``) cut, et al."""
    persons = list(context["entry"].persons.get("author", []))
    style = context["style"]
    cut = bool(persons) and str(persons[-1]) == "others"
    if cut:
        persons = persons[:-1]
    if len(persons) > MAX_AUTHORS:
        persons, cut = persons[:SHOWN_IF_CUT], True
    names = [style.format_name(p, True) for p in persons]
    if cut:
        return Text(join(sep=", ")[names].format_data(context), ET_AL)
    return join(sep=", ", sep2=AND, last_sep="," + AND)[names].format_data(context)


def _link(prefix, name, shown):
    url = join[prefix, field(name, raw=True)]
    return optional[href(url)[join[shown, field(name, raw=True)]]]


class BookStyle(BaseStyle):
    """Entries as ``Authors (Year). Title. Venue. Links``, sorted by author, year and title."""

    default_name_style = "lastfirst"
    default_label_style = "number"
    default_sorting_style = "author_year_title"

    def links(self):
        """DOI, arXiv, then the publisher's address: each a plain link."""
        return join(sep=". ")[
            _link("https://doi.org/", "doi", "doi:"),
            _link("https://arxiv.org/abs/", "eprint", "arXiv:"),
            optional[href(field("url", raw=True))[field("url", raw=True)]],
        ]

    def head(self):
        return join[authors, " (", field("year"), ")"]

    def format_article(self, context):
        venue = join[tag("em")[field("journal")], optional[" ", field("volume")]]
        return toplevel[sentence(sep=". ")[self.head(), field("title"), venue, self.links()]].format_data(context)

    def format_inproceedings(self, context):
        return toplevel[
            sentence(sep=". ")[self.head(), field("title"), tag("em")[field("booktitle")], self.links()]
        ].format_data(context)

    def format_book(self, context):
        return toplevel[
            sentence(sep=". ")[self.head(), tag("em")[field("title")], field("publisher"), self.links()]
        ].format_data(context)

    def format_techreport(self, context):
        return toplevel[
            sentence(sep=". ")[self.head(), field("title"), field("institution"), self.links()]
        ].format_data(context)

    def format_misc(self, context):
        return toplevel[
            sentence(sep=". ")[self.head(), field("title"), optional[field("howpublished")], self.links()]
        ].format_data(context)


# -- the citations ---------------------------------------------------------------------------------


def _round_brackets():
    return BracketStyle(left="(", right=")", sep="; ")


def _persons():
    return PersonStyle(sep=", ", sep2=AND, last_sep="," + AND, other=Text(ET_AL))


@dataclasses.dataclass
class BookReferenceStyle(AuthorYearReferenceStyle):
    """The ``book`` referencing style: author-year, round brackets, ``&``, ``;`` between works."""

    bracket_textual: BracketStyle = dataclasses.field(default_factory=_round_brackets)
    bracket_parenthetical: BracketStyle = dataclasses.field(default_factory=_round_brackets)
    bracket_author: BracketStyle = dataclasses.field(default_factory=_round_brackets)
    bracket_label: BracketStyle = dataclasses.field(default_factory=_round_brackets)
    bracket_year: BracketStyle = dataclasses.field(default_factory=_round_brackets)
    person: PersonStyle = dataclasses.field(default_factory=_persons)


# -- the page ---------------------------------------------------------------------------------


class EntriesAsList(SphinxPostTransform):
    """The bibliography's entries as a list, each with its anchor, in every format.

    Why: ``sphinxcontrib.bibtex`` writes them as docutils citations (only those can be
    cited), which show a number (``[12]``) that no citation in an author-year text
    names; and Sphinx's LaTeX writer moves every citation to the end of the PDF under a
    heading of its own, leaving the page empty.  After the entries are written (priority
    5) and the references to them resolved (10), before LaTeX gathers citations (750),
    each becomes an item of a list (class ``book-bibliography``, styled in
    ``book.css``) that keeps its anchor (``bibtex_cite_id``: ``#ref-vaswani2017``).
    """

    default_priority = 20

    def run(self, **kwargs):
        for parent in list(self.document.findall(nodes.Element)):
            entries = [c for c in parent.children if isinstance(c, nodes.citation)]
            if not entries or len(entries) != len(parent.children):
                continue
            listing = nodes.bullet_list(ids=list(parent.get("ids", [])), classes=["book-bibliography"])
            for citation in entries:
                item = nodes.list_item()
                item += nodes.target("", "", ids=list(citation["ids"]))
                # LaTeX: citations link to hyperref's anchor of a \bibitem, cite.<docname>:<id>.
                anchor = f"cite.{citation['docname']}:{citation['ids'][0]}"
                item += nodes.raw("", f"\\hypertarget{{{anchor}}}{{}}", format="latex")
                item.extend(child.deepcopy() for child in citation.children if not isinstance(child, nodes.label))
                listing += item
            parent.replace_self(listing)


# -- citations as plain text (the chapters' notebooks) ----------------------------------------------


def entry_url(entry):
    """The address an entry links first: its DOI, its arXiv page or its url."""
    fields = entry.fields
    if "doi" in fields:
        return "https://doi.org/" + fields["doi"]
    if "eprint" in fields:
        return "https://arxiv.org/abs/" + fields["eprint"]
    return fields.get("url", "")


@functools.cache
def _styles():
    """The entries' style and the citations' (pybtex finds plugins in packages' metadata: once)."""
    return BookStyle(), BookReferenceStyle()


def _plain(text):
    """Rich text as plain text, a reference (a docutils node on the page) as its words."""
    if isinstance(text, BaseReferenceText):
        text = Text(*text.parts)
    if isinstance(text, BaseMultipartText):
        return "".join(_plain(part) for part in text.parts)
    return text.render_as("text")


def citation_text(entries, role, content, link=None):
    """A citation as the page shows it: ``Vaswani et al. (2017)``, ``(Dao et al., 2022)``.

    ``role`` is the role's last part (``t`` or ``p``), ``content`` its keys, separated
    by commas: written by the ``book`` referencing style, as sphinxcontrib-bibtex
    writes the page, the works in the bibliography's order.  ``link(shown, url)``, if
    given, writes each work's part (Markdown links, say).  Keys only: a pre or
    post text (``{cite:t}`vaswani2017{Table 1}```) cannot be translated (Sphinx warns
    when a translated message's reference targets differ): say it in the sentence.
    """
    keys = [key.strip() for key in content.split(",")]
    if not all(key in entries for key in keys):
        raise ValueError(f"cannot read the citation {content!r} (keys: {BIBFILE})")
    entry_style, style = _styles()
    parts = []
    for entry in entry_style.sort([entries[key] for key in keys]):
        # (builder, fromdocname, todocname, citation_id, title, pre_text, post_text): none is read here.
        info = SphinxReferenceInfo(None, "", "", entry.key, None, "", "")
        data = {"entry": entry, "formatted_entry": None, "reference_info": info, "style": style}
        shown = _plain(style.inner(role).format_data(data))
        parts.append(Text(link(shown, entry_url(entry)) if link else shown))
    return style.outer(role, parts).format().render_as("text")


def load_entries(path=BIBPATH):
    """``{key: pybtex Entry}`` of the book's bibliography."""
    from pybtex.database import parse_file

    return parse_file(str(path), bib_format="bibtex").entries


def setup(app):
    pybtex.plugin.register_plugin("pybtex.style.formatting", "book", BookStyle)
    sphinxcontrib.bibtex.plugin.register_plugin("sphinxcontrib.bibtex.style.referencing", "book", BookReferenceStyle)
    app.add_post_transform(EntriesAsList)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

