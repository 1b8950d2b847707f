"""Which form of an explorer each builder keeps (docs/_ext/book_outputs.py), without building the book."""

import json
from types import SimpleNamespace

import pytest
import torch
from book_outputs import ExplorerRenderer, attention_explorer, patch_myst_nb
from myst_nb.core.render import MimeData, get_mime_priority, load_mime_renders

from attn.viz.plot import EXPLORER_MIME, explore


@pytest.fixture(scope="module", autouse=True)
def registered():
    patch_myst_nb(None, None)
    patch_myst_nb(None, None)  # twice, as a second build in one process does: listed once
    assert load_mime_renders().count(ExplorerRenderer) == 1


def chosen(builder, bundle):
    """The mime type myst-nb's SelectMimeType keeps from ``bundle`` for ``builder``."""
    return next(m for m in get_mime_priority(builder, ()) if m in bundle)


def test_the_web_pages_get_the_explorer_print_and_epub_the_heatmap():
    bundle = explore(torch.full((3, 3), 1 / 3))._repr_mimebundle_()
    assert chosen("html", bundle) == EXPLORER_MIME
    assert chosen("singlehtml", bundle) == EXPLORER_MIME
    for builder in ("latex", "epub"):
        assert chosen(builder, bundle) == "image/png", builder
    # Other outputs keep myst-nb's own order.
    assert chosen("html", {"text/html": "", "image/png": "", "text/plain": ""}) == "text/html"


def test_the_data_becomes_one_node_with_its_json():
    data = explore(torch.full((2, 2), 0.5), ["a", "b"]).data
    [node] = ExplorerRenderer.handle_mime(None, MimeData(EXPLORER_MIME, data), False)
    assert isinstance(node, attention_explorer)
    assert json.loads(node["data"]) == data
    # Other mime types are myst-nb's.
    assert ExplorerRenderer.handle_mime(None, MimeData("image/png", ""), False) is None


def test_a_myst_nb_not_checked_stops_the_build(monkeypatch):
    import myst_nb
    from sphinx.errors import ExtensionError

    monkeypatch.setattr(myst_nb, "__version__", "2.0.0")
    with pytest.raises(ExtensionError, match="myst-nb 2.0.0"):
        patch_myst_nb(SimpleNamespace(), None)
