"""Small builders shared by several test files (imported as ``helpers``: pytest puts tests/ on the path)."""

from __future__ import annotations

import asyncio
from html.parser import HTMLParser


def pdf_bytes(objects: list[bytes], version: bytes = b"1.4") -> bytes:
    """A PDF file holding ``objects`` as objects 1..n (object 1 the catalog), with a correct xref table:
    hand-written PDFs let a test build exactly the structure it needs (bombs, layers, page counts)."""
    out = bytearray(b"%PDF-" + version + b"\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def assess_and_close(assessor, paper):
    """Every verdict of ``paper``, the assessor's client closed on the same event loop."""
    async def go():
        try:
            return await assessor.assess_paper(paper)
        finally:
            await assessor.aclose()

    return asyncio.run(go())


def one_error_line(run, *words: str) -> str:
    """The CLI's bad-input contract: exit 2 and one line on stderr, naming each of ``words``."""
    assert run.code == 2, run
    lines = [ln for ln in run.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("checklist-eval: error:"), run
    for w in words:
        assert w.lower() in lines[0].lower(), (w, lines[0])
    return lines[0]


def mock_llm(server, **config):
    """The LLM assessor against a loopback server: key from CE_TEST_KEY, no cache, fast retries."""
    from checklist_eval.assessors import make_assessor

    options = dict(model="gpt-4o-mini", base_url=server.base_url, api_key_env="CE_TEST_KEY", no_cache=True,
                   backoff_initial=0.01, timeout=5.0)
    options.update(config)
    return make_assessor("llm", **options)


class StrictHtml(HTMLParser):
    """Well-formedness as an HTML parser sees it: every element closed in order, ids unique."""

    VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "col", "area", "base", "embed", "track"}
    OPTIONAL_END = {"p", "li", "dt", "dd", "tr", "td", "th", "option", "thead", "tbody"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.ids: set[str] = set()
        self.problems: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if name == "id":
                if value in self.ids:
                    self.problems.append(f"duplicate id {value}")
                self.ids.add(value or "")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        while self.stack and self.stack[-1] != tag and self.stack[-1] in self.OPTIONAL_END:
            self.stack.pop()
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_html(text: str) -> StrictHtml:
    parser = StrictHtml()
    parser.feed(text)
    parser.close()
    assert text.startswith("<!DOCTYPE html>")
    assert not parser.problems and not parser.stack, (parser.problems, parser.stack)
    return parser
