"""One object per endpoint per process: every check, score, batch, serve job and contamination run of a
process that talks to the same (endpoint, model) with the same limits gets the same one, so the limits hold
for the engine, not per job. ``serve`` builds an assessor per upload: two uploads put four requests on a
2-slot engine and twice ``--rpm`` on a provider when each had its own scheduler.

Held weakly: once no assessor uses an endpoint's object it is dropped (a test suite starts thousands of
loopback servers, each on its own port)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

__all__ = ["shared"]

T = TypeVar("T")

_objects: weakref.WeakValueDictionary[Hashable, Any] = weakref.WeakValueDictionary()
_lock = threading.Lock()


def shared(key: Hashable, make: Callable[[], T]) -> T:
    """The process's object for ``key``, made by ``make`` the first time it is asked for."""
    with _lock:
        found = _objects.get(key)
        if found is None:
            found = make()
            _objects[key] = found
        return found
