#!/usr/bin/env python3
"""Turns the Python code blocks of documentation pages into notebooks, for `check` to read as a
user would paste them: each Markdown page becomes one notebook with a cell per code block, in page
order (a guide's later blocks use the imports of its first).

    python3 scripts/markdown_snippets.py OUT OWNER/REPO=GIT_DIR:GLOB [...]

GIT_DIR is a clone (or bare mirror) of the repository OWNER/REPO, read at HEAD; GLOB picks
its pages (`docs/*.md`; `*` crosses folders). Blocks fenced as python/py/ipython/pycon and MyST
`{code-cell}` blocks are taken (their `:option:` lines and `---` option blocks skipped); a block
of doctest prompts keeps only the `>>> ` and `... ` lines. A `.rst` page gives its
`.. code-block:: python` (and `code`, `testcode`) bodies. OUT/MANIFEST.tsv names each notebook's
repository, commit and page, as docs/precision/*manifest.tsv do.
"""
import fnmatch
import json
import os
import re
import subprocess
import sys

FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*"
                   r"(\{code-cell\}\s*(?:ipython3|python3?)?|python3?|py|ipython3?|pycon)?\s*$")


def skip_options(lines, i):
    """The first line of a MyST code cell's code, past its options."""
    while i < len(lines) and lines[i].startswith(":"):
        i += 1
    if i < len(lines) and lines[i].strip() == "---":
        i += 1
        while i < len(lines) and lines[i].strip() != "---":
            i += 1
        i += 1
    return i


def code_blocks(text):
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3)
        i += 1
        if lang and lang.startswith("{code-cell}"):
            i = skip_options(lines, i)
        body = []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        if not lang:  # another language's block
            continue
        if lang == "pycon" or any(l.startswith(">>> ") or l == ">>>" for l in body):
            body = [l[4:] for l in body if l.startswith(">>> ") or l.startswith("... ")]
        if any(l.strip() for l in body):
            blocks.append("\n".join(body))
    return blocks


RST_DIRECTIVE = re.compile(
    r"^(\s*)\.\. (code-block|code|sourcecode|testcode)::\s*(python3?|py)?\s*$")


def rst_code_blocks(text):
    """reStructuredText's Python code directives (`.. code-block:: python`, `.. code:: py`,
    `.. testcode::`): the lines indented under each, past its `:option:` lines."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = RST_DIRECTIVE.match(lines[i])
        i += 1
        if not m:
            continue
        indent, directive, lang = len(m.group(1)), m.group(2), m.group(3)
        while i < len(lines) and lines[i].strip().startswith(":"):
            i += 1
        body = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > indent):
            body.append(lines[i])
            i += 1
        while body and not body[-1].strip():
            body.pop()
        if body and (lang or directive == "testcode"):
            cut = min(len(l) - len(l.lstrip()) for l in body if l.strip())
            blocks.append("\n".join(l[cut:] for l in body))
    return blocks


def git(git_dir, *args):
    return subprocess.check_output(["git", "-C", git_dir, *args])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "MANIFEST.tsv"), "w") as manifest:
        for arg in sys.argv[2:]:
            repo, _, rest = arg.partition("=")
            git_dir, pattern = rest.rsplit(":", 1)
            commit = git(git_dir, "rev-parse", "HEAD").decode().strip()
            pages = git(git_dir, "ls-tree", "-r", "--name-only", "HEAD").decode().split("\n")
            for page in sorted(p for p in pages if fnmatch.fnmatch(p, pattern)):
                text = git(git_dir, "show", f"HEAD:{page}").decode("utf-8", "replace")
                cells = rst_code_blocks(text) if page.endswith(".rst") else code_blocks(text)
                if not cells:
                    continue
                notebook = {"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                       "execution_count": None, "source": c} for c in cells],
                            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
                file = (repo.replace("/", "_") + "_" + page.rsplit(".", 1)[0].replace("/", "_") +
                        ".ipynb")
                with open(os.path.join(out, file), "w") as f:
                    json.dump(notebook, f, indent=1)
                manifest.write(f"{file}\t{repo}\t{commit}\t{page}\n")


if __name__ == "__main__":
    main()
