"""What a Codabench bundle is built from: the export's options (no I/O here; ``codabench`` builds)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DEFAULT_IMAGE", "PHASES", "WORKER_KEY_PATH", "BundleOptions"]

DEFAULT_IMAGE = "python:3.11-slim"  # an official image: the scoring program installs the bundled wheel
WORKER_KEY_PATH = "/app/data/checklist-eval/api_key"  # HOST_DIRECTORY/data/checklist-eval/api_key on a worker
PHASES = {"dev": ("Development", "dev_phase", "Score your submission on the development rules; the "
                                             "leaderboard shows the latest score."),
          "final": ("Final", "final_phase", "Held-out final phase: the scored submission counts for the "
                                           "final ranking.")}


@dataclass
class BundleOptions:
    title: str = "NeurIPS checklist assistant challenge"
    phases: tuple[str, ...] = ("dev", "final")
    max_submissions_per_day: int = 1  # the NIST rule: one scored submission per day
    docker_image: str = DEFAULT_IMAGE
    model: str | None = None
    base_url: str | None = None  # as the public files show it: no credentials, no query (redact.public_url)
    endpoint_url: str | None = field(default=None, repr=False)  # the full URL when it differs: private file only
    api_key_env: str = "OPENAI_API_KEY"
    api_key: str | None = field(default=None, repr=False)  # a capped key the bundle carries
    spend_cap_usd: float | None = None  # the cap on that key (or on the queue's key), stated on the pages
    queue: str | None = None  # the organizer's own Codabench queue (its vhost)
    worker_key_path: str = WORKER_KEY_PATH

    @property
    def credential(self) -> str:
        """How an LLM phase gets its key: ``bundle`` (capped key inside), ``worker`` (a file on the
        organizer's workers), ``none`` (a keyless endpoint) or ``heuristic`` (no model)."""
        if not self.model:
            return "heuristic"
        if self.api_key:
            return "bundle"
        return "worker" if self.queue else "none"
