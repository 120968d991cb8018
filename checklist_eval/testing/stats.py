"""What the loopback server is told to get wrong (``FaultConfig``: which faults, how often, how a 429 asks to
wait) and what it counts of what it was sent and answered (``ServerStats``: the figures tests, drills and
benchmarks read)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["FAULT_KINDS", "FaultConfig", "ServerStats"]

FAULT_KINDS = ("429", "500", "timeout", "malformed", "truncated")


@dataclass(frozen=True)
class FaultConfig:
    rate: float = 0.0
    kinds: tuple[str, ...] = FAULT_KINDS
    retry_after: float = 0.05  # seconds announced on a 429 (retry-after-ms, and Retry-After rounded up)
    timeout_hold: float = 5.0  # a "timeout" fault holds the connection this long, then closes it

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds: {sorted(unknown)}")


@dataclass
class ServerStats:
    requests: int = 0  # every HTTP request, any path
    chat_requests: int = 0
    by_status: dict[int, int] = field(default_factory=dict)
    by_fault: dict[str, int] = field(default_factory=dict)
    prompt_tokens: int = 0  # of answered (200) completions, as reported in their usage
    completion_tokens: int = 0
    cached_tokens: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    # share of prompt tokens in a prefix seen in an EARLIER request (what a provider's cache would reuse)
    prefix_reuse: float = 0.0
    # share of prompt tokens in a prefix shared with ANY other request (the prefix a paper's questions share)
    prefix_share: float = 0.0
    arrivals: list[float] = field(default_factory=list)  # monotonic arrival time of each chat request
    probes: int = 0  # GET /models and /props answered (a client asking what the engine is; not in by_status)
    max_queued: int = 0  # with slots: the most requests waiting at once for a busy slot
    max_busy_slots: int = 0
    auth_headers_seen: int = 0
    logprob_replies: int = 0  # chat replies that carried the log-probabilities asked for

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["by_status"] = {str(k): v for k, v in self.by_status.items()}
        d.pop("arrivals")
        return d
