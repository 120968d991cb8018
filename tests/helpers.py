"""Small builders shared by several test files (imported as ``helpers``: pytest puts tests/ on the path)."""

from __future__ import annotations

import asyncio


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
