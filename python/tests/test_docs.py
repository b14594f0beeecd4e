"""docs/python.md is a notebook session: every `>>>` example in its ```python blocks runs, and
prints what the page shows (ELLIPSIS where the page elides), so the page cannot go stale."""

import doctest
import os
import re

from conftest import ROOT


def test_python_md_examples_run_as_shown():
    text = (ROOT / "docs/python.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    session = "\n".join(b for b in blocks if ">>>" in b)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(session, {}, "docs/python.md", str(ROOT / "docs/python.md"), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    cwd = os.getcwd()
    os.chdir(ROOT)  # the page's paths are relative to the repository root
    try:
        runner.run(test)
    finally:
        os.chdir(cwd)
    result = runner.summarize(verbose=False)
    assert result.attempted > 20
    assert result.failed == 0, "docs/python.md examples differ (see the output above)"
