"""Printed output on the pages exactly as the code printed it.

myst-nb's ``coalesce_streams`` (``nb_merge_streams``) ends every chunk with a line break, and a kernel
may send one ``print`` in several chunks: this joins each stream's chunks as they came first.
"""

import myst_nb
import myst_nb.core.render
from myst_nb.core.utils import coalesce_streams as myst_nb_coalesce_streams
from sphinx.errors import ExtensionError

MYST_NB_CHECKED = ("1.4.",)  # the myst-nb releases the private names patched here and in book_explorer were checked on


def require_myst_nb(extension, private_name):
    """Stop the build on a myst-nb release that ``extension``'s use of ``private_name`` was not checked on."""
    if not myst_nb.__version__.startswith(MYST_NB_CHECKED):
        raise ExtensionError(
            f"{extension} relies on {private_name}, a private name checked on myst-nb "
            f"{' '.join(MYST_NB_CHECKED)}x, but myst-nb {myst_nb.__version__} is installed: check that "
            "myst-nb still uses it so, then add the version to book_outputs.MYST_NB_CHECKED"
        )


def coalesce_streams(outputs):
    """``outputs`` with the chunks of each stream (stdout, stderr) joined as they came, in one output."""
    joined, streams = [], {}
    for output in outputs or []:
        if output["output_type"] != "stream":
            joined.append(output)
        elif output["name"] in streams:
            streams[output["name"]]["text"] += output["text"]
        else:
            output = output.copy()
            streams[output["name"]] = output
            joined.append(output)
    return myst_nb_coalesce_streams(joined)


def patch_myst_nb(app, config):
    require_myst_nb("book_outputs", "myst_nb.core.render.coalesce_streams")
    myst_nb.core.render.coalesce_streams = coalesce_streams


def setup(app):
    app.connect("config-inited", patch_myst_nb)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
