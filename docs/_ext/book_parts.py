"""Chapter numbers that run on from one part of the book to the next.

Sphinx numbers each of the index's toctrees (one per part) from 1: this shifts each later one's
numbers by the chapters before it, in headings, navigation and previous/next links.
"""

from docutils import nodes
from sphinx import addnodes


def continue_numbers(app, env):
    changed = []
    for docname in sorted(env.numbered_toctrees):
        offset = 0
        for toctree in env.get_doctree(docname).findall(addnodes.toctree):
            if not toctree.get("numbered"):
                continue
            refs = [ref for _, ref in toctree["entries"] if ref in env.toc_secnumbers]
            for ref in refs if offset else ():
                secnums = env.toc_secnumbers[ref]
                for anchor, number in secnums.items():
                    if number:
                        secnums[anchor] = (number[0] + offset, *number[1:])
                # a new list for each node: a title and its reference share one
                for node in [*env.tocs[ref].findall(nodes.reference), env.titles.get(ref)]:
                    if node is not None and node.get("secnumber"):
                        node["secnumber"] = [node["secnumber"][0] + offset, *node["secnumber"][1:]]
                changed.append(ref)
            offset += len(refs)
    return changed


def setup(app):
    app.connect("env-get-updated", continue_numbers, priority=900)  # after Sphinx's numbering (its collector: 500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
