"""The bibliography's ``book`` styles, so that nothing sphinxcontrib-bibtex writes is an English word.

Entries: ``Bahdanau, D., Cho, K. & Bengio, Y. (2015). Title. Venue. arXiv:1409.0473``; citations:
``Vaswani et al. (2017)``, ``(Dao et al., 2022; Child et al., 2019)``, as text too (:func:`citation_text`).
"""

import functools
from pathlib import Path

import pybtex.plugin
from pybtex.backends.plaintext import Backend as TextBackend
from pybtex.database import parse_file
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

BIBFILE = "docs/references.bib"
BIBPATH = Path(__file__).resolve().parents[2] / BIBFILE
AND, ET_AL = " & ", " et al."  # the same in every language
MAX_AUTHORS, SHOWN_IF_CUT = 8, 6  # a longer list of authors shows the first 6, et al.
# An entry's links, in this order: (field, address prefix, text before the field).
LINKS = (("doi", "https://doi.org/", "doi:"), ("eprint", "https://arxiv.org/abs/", "arXiv:"), ("url", "", ""))


@node
def authors(children, context):
    """``Last, F., Last, F. & Last, F.``; a long list (or one ending in ``others``) cut, et al."""
    persons = list(context["entry"].persons.get("author", []))
    cut = bool(persons) and str(persons[-1]) == "others"
    persons = persons[:-1] if cut else persons
    if len(persons) > MAX_AUTHORS:
        persons, cut = persons[:SHOWN_IF_CUT], True
    names = [context["style"].format_name(p, True) for p in persons]
    if cut:
        return Text(join(sep=", ")[names].format_data(context), ET_AL)
    return join(sep=", ", sep2=AND, last_sep="," + AND)[names].format_data(context)


class BookStyle(BaseStyle):
    """Entries as ``Authors (Year). Title. Venue. Links``, sorted by author, year and title."""

    default_name_style = "lastfirst"
    default_sorting_style = "author_year_title"

    def links(self):
        """DOI, arXiv, then the publisher's address: each a plain link."""
        return join(sep=". ")[[
            optional[href(join[prefix, field(name, raw=True)])[join[shown, field(name, raw=True)]]]
            for name, prefix, shown in LINKS
        ]]

    def entry(self, context, *middle):
        """``Authors (Year). <middle>. Links``."""
        head = join[authors, " (", field("year"), ")"]
        return toplevel[sentence(sep=". ")[[head, *middle, self.links()]]].format_data(context)

    def format_article(self, context):
        return self.entry(context, field("title"), join[tag("em")[field("journal")], optional[" ", field("volume")]])

    def format_inproceedings(self, context):
        return self.entry(context, field("title"), tag("em")[field("booktitle")])

    def format_book(self, context):
        return self.entry(context, tag("em")[field("title")], field("publisher"))

    def format_techreport(self, context):
        return self.entry(context, field("title"), field("institution"))

    def format_misc(self, context):
        return self.entry(context, field("title"), optional[field("howpublished")])


def book_reference_style():
    """The ``book`` referencing style: author-year, round brackets, ``&``, ``;`` between works."""
    kinds = ("textual", "parenthetical", "author", "label", "year")
    return AuthorYearReferenceStyle(
        **{f"bracket_{kind}": BracketStyle(left="(", right=")", sep="; ") for kind in kinds},
        person=PersonStyle(sep=", ", sep2=AND, last_sep="," + AND, other=Text(ET_AL)),
    )


class EntriesAsList(SphinxPostTransform):
    """The bibliography's entries as a list (``book-bibliography``), each keeping its anchor.
    (sphinxcontrib-bibtex writes citations, which show a number and which LaTeX moves to the end.)"""

    default_priority = 20  # after the references are resolved (10), before LaTeX (750)

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


def entry_url(entry):
    """The address an entry links first: its DOI, its arXiv page or its url."""
    return next((prefix + entry.fields[name] for name, prefix, _ in LINKS if name in entry.fields), "")


# The entries' style and the citations', made once (pybtex finds plugins in packages' metadata).
_styles = functools.cache(lambda: (BookStyle(), book_reference_style()))


def _plain(text):
    """Rich text as plain text, a reference (a docutils node on the page) as its words."""
    if isinstance(text, BaseReferenceText):
        text = Text(*text.parts)
    if isinstance(text, BaseMultipartText):
        return "".join(_plain(part) for part in text.parts)
    return text.render_as("text")


def citation_text(entries, role, content, link=None):
    """A citation as the page shows it: ``Vaswani et al. (2017)``, ``(Dao et al., 2022)``.
    ``role``: ``t`` or ``p``; ``content``: keys, commas between; ``link(shown, url)`` writes each work's part."""
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


@functools.cache
def load_entries(path=BIBPATH):
    """``{key: pybtex Entry}`` of the book's bibliography."""
    return parse_file(str(path), bib_format="bibtex").entries


def setup(app):
    for name in ("text", "plaintext"):  # found at once (pybtex reads every package's metadata: 20 s a build)
        pybtex.plugin.register_plugin("pybtex.backends", name, TextBackend, force=True)
    pybtex.plugin.register_plugin("pybtex.style.formatting", "book", BookStyle)
    sphinxcontrib.bibtex.plugin.register_plugin("sphinxcontrib.bibtex.style.referencing", "book", book_reference_style)
    app.add_post_transform(EntriesAsList)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
