"""The one way a command prints its result: the model's JSON dump with ``--json``, else its text view.

The JSON printed is the model's dump and nothing else, so the documented shape is the model; each
command keeps the layout scripts already read (``indent``, ``ensure_ascii``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel


def dump_json(doc: BaseModel, *, indent: int | None = None, ensure_ascii: bool = True) -> str:
    """``doc`` as JSON text (no trailing newline), keys in field order."""
    return json.dumps(doc.model_dump(mode="json"), indent=indent, ensure_ascii=ensure_ascii)


def emit(doc: BaseModel, as_json: bool, render_text: Callable[[], object], *, indent: int | None = None,
         ensure_ascii: bool = True) -> int:
    """Print ``doc`` as JSON on stdout when ``as_json``, else call ``render_text``; exit status 0."""
    if as_json:
        print(dump_json(doc, indent=indent, ensure_ascii=ensure_ascii))
    else:
        render_text()
    return 0
