"""Printed output on the pages exactly as the code printed it.

A local Sphinx extension (``extensions`` in ``conf.py``).

Why: ``nb_merge_streams`` (conf.py) makes myst-nb join a cell's stream outputs
into one block with ``myst_nb.core.utils.coalesce_streams``, which ends every
chunk with a line break.  A kernel may send one ``print`` in several chunks (it
flushes on a timer, so this happens on a busy machine), and the page then shows a
line break the code never printed: chapter 6 once showed ``64`` and
`` 64 2,362,368`` on two lines for ``print(64, 64, "2,362,368")``.  This hook
gives myst-nb's renderer a version that first joins the chunks of each stream as
they came, then lets myst-nb's own function do the rest (``\\r`` and ``\\b``, the
order of stdout and stderr).  The name is private, so it runs only on the
myst-nb versions checked below and stops the build on others.
"""

import myst_nb
import myst_nb.core.render
from myst_nb.core.utils import coalesce_streams as myst_nb_coalesce_streams
from sphinx.errors import ExtensionError

# The myst-nb releases whose ``myst_nb.core.render.coalesce_streams`` this module was checked against.
MYST_NB_CHECKED = ("1.4.",)


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
    if not myst_nb.__version__.startswith(MYST_NB_CHECKED):
        raise ExtensionError(
            f"book_outputs patches myst_nb.core.render.coalesce_streams, a private name checked "
            f"on myst-nb {' '.join(MYST_NB_CHECKED)}x, but myst-nb {myst_nb.__version__} is "
            "installed: check that the renderer still joins streams with it, then add the "
            "version to MYST_NB_CHECKED"
        )
    myst_nb.core.render.coalesce_streams = coalesce_streams


def setup(app):
    app.connect("config-inited", patch_myst_nb)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
