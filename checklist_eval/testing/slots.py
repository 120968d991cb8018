"""llama.cpp's server as the loopback server plays it: a fixed number of slots, a context per slot, and
what it says about both.

    MockServer(slots=2, props=True, context_tokens=8192, context_error="llama.cpp", latency=0.5)

- **Slots.** At most ``slots`` chat requests are worked on at once (each holds its slot for the
  server's ``latency``); the others wait in a queue, in arrival order, as llama.cpp's task queue does.
  A client that keeps more in flight than there are slots sees its requests' time spent waiting there,
  so its own timeout can run out before the engine has even started on them.
- **Shared cores.** With ``slots_share_cores=True`` the slots take turns on one processor, as llama.cpp's
  do on a CPU: a request needs ``latency`` seconds of the engine alone, and k busy slots each progress at
  1/k of that speed (four at once each take four times as long; throughput stays the same). Measured on
  the real llama-server (2 cores, 4 slots): four 6.5k-token prompts at once, each generating 0.2-0.5 tokens/s on a
  loaded machine ran past a 120 s deadline.
- **Deadlines the server decides.** A test about what a client does when its requests run past their
  deadline sets the server to hold the reply back, so no race with a busy machine decides the verdict:
  ``queue_stalls=True``, a request that finds every slot busy is never served (an engine whose queue is
  stuck); ``stall_above=n``, while more than ``n`` slots are busy none of them progresses (slots thrashing
  on shared cores), and a request stalled ``abandon_after`` seconds is dropped unanswered, its slot freed
  (its client has given up by then: set it to the client's deadline).
- **/props.** ``GET /props`` answers what llama.cpp's does for these fields:
  ``default_generation_settings.n_ctx`` (the context of one slot) and ``total_slots``.
- **Context overflow.** A prompt over the context gets llama.cpp's 400, its exact body (type
  ``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``), as ``llama-server`` b6000+ sends
  it; ``context_error="openai"`` keeps OpenAI's ``context_length_exceeded``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from checklist_eval.testing.replies import Reply, error_reply, json_reply

__all__ = ["CONTEXT_ERRORS", "SlotQueue", "context_exceeded", "props_reply"]

CONTEXT_ERRORS = ("openai", "llama.cpp", "llama-cpp-python")


def context_exceeded(wording: str, prompt_tokens: int, context_tokens: int, max_tokens: int = 0) -> Reply:
    """The 400 of a prompt over the context, in the engine's own words."""
    if wording == "llama.cpp":
        return json_reply(400, {"error": {
            "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": prompt_tokens, "n_ctx": context_tokens,
            "message": f"request ({prompt_tokens} tokens) exceeds the available context size ({context_tokens} "
                       "tokens), try increasing it"}})
    if wording == "llama-cpp-python":  # its server's formatter (llama_cpp/server/errors.py), default n_ctx 2048:
        # "requested" counts the prompt and the completion's max_tokens together
        return error_reply(400, f"This model's maximum context length is {context_tokens} tokens. However, you "
                                f"requested {prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, "
                                f"{max_tokens} in the completion). Please reduce the length of the messages or "
                                "completion.", "invalid_request_error", "context_length_exceeded")
    return error_reply(400, f"This model's maximum context length is {context_tokens} tokens. However, your messages "
                            f"resulted in {prompt_tokens} tokens.", "invalid_request_error", "context_length_exceeded")


def props_reply(model: str, context_tokens: int, slots: int | None) -> Reply:
    """llama.cpp's ``GET /props`` (the fields a client reads; the real one has many more)."""
    return json_reply(200, {"default_generation_settings": {"n_ctx": context_tokens, "params": {}},
                            "total_slots": slots or 1, "model_path": f"/models/{model}.gguf",
                            "chat_template": "", "build_info": "b0000-checklist-eval-loopback"})


class SlotQueue:
    """``slots`` places worked on at once; the rest wait in arrival order. Counts the deepest queue
    (``max_waiting``: requests that found every slot busy) and the most slots busy at once."""

    def __init__(self, slots: int, share_cores: bool = False):
        self.slots = slots
        self.share_cores = share_cores
        self.queue_stalls = False
        self.stall_above: int | None = None
        self.abandon_after = 60.0
        self._sem: asyncio.Semaphore | None = None
        self.waiting = 0
        self.max_waiting = 0
        self.busy = 0
        self.max_busy = 0

    def _semaphore(self) -> asyncio.Semaphore:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.slots)
        return self._sem

    async def __aenter__(self) -> SlotQueue:
        sem = self._semaphore()
        if not sem.locked():
            await sem.acquire()  # a free slot: taken at once (no await point before it is held)
        else:
            self.waiting += 1
            self.max_waiting = max(self.max_waiting, self.waiting)
            try:
                if self.queue_stalls:
                    await asyncio.Event().wait()  # never set: the reply never comes
                await sem.acquire()
            finally:
                self.waiting -= 1
        self.busy += 1
        self.max_busy = max(self.max_busy, self.busy)
        return self

    async def work(self, seconds: float) -> None:
        """Hold the slot for ``seconds`` of the engine's time alone (more wall time while others share it)."""
        if not self.share_cores:
            await asyncio.sleep(seconds)
            return
        tick = min(0.01, seconds)
        done = 0.0
        stalled = 0.0
        while done < seconds:
            await asyncio.sleep(tick)
            if self.stall_above is not None and self.busy > self.stall_above:
                stalled += tick
                if stalled >= self.abandon_after:
                    raise ConnectionAbortedError("stalled slot dropped")  # the connection closes unanswered
                continue
            done += tick / max(1, self.busy)

    async def __aexit__(self, *exc: Any) -> None:
        self.busy -= 1
        self._semaphore().release()
