"""Printed output joined as printed (docs/_ext/book_outputs.py), without building the book."""

from book_outputs import coalesce_streams
from myst_nb.core.utils import coalesce_streams as myst_nb_coalesce_streams
from nbformat.v4 import new_output


def chunks():
    # One print(64, 64, "2,362,368") that the kernel sent in two chunks, then a figure and stderr.
    return [
        new_output("stream", name="stdout", text="64"),
        new_output("stream", name="stdout", text=" 64 2,362,368\n"),
        new_output("display_data", data={"text/plain": "<Figure>"}),
        new_output("stream", name="stderr", text="warn\n"),
        new_output("stream", name="stdout", text="done\n"),
    ]


def test_chunks_of_one_line_stay_on_one_line():
    out = coalesce_streams(chunks())
    assert [o["output_type"] for o in out] == ["stream", "display_data", "stream"]
    assert out[0]["name"] == "stdout"
    assert out[0]["text"] == "64 64 2,362,368\ndone\n"
    assert out[2]["text"] == "warn\n"


def test_myst_nb_alone_breaks_the_line():
    # Why the hook exists: if myst-nb's own function stops adding a line break between
    # chunks, this test fails and book_outputs can go.
    assert myst_nb_coalesce_streams(chunks())[0]["text"].startswith("64\n 64")


def test_carriage_return_still_processed():
    # A progress line rewritten with \r shows its last state, as myst-nb shows it.
    out = coalesce_streams([new_output("stream", name="stdout", text="10%\r"),
                            new_output("stream", name="stdout", text="100%\n")])
    assert out[0]["text"] == "100%\n"
