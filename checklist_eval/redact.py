"""The one redaction rule for secrets (API keys), applied where endpoint data enters the process and
again by every writer, as a second line of defence.

Rule: every occurrence of a registered secret, and of any piece of it at least ``MIN_PIECE`` (8) characters
long, is replaced by ``***`` (but not pieces of digits only: a key holding "0000000000" must not mask the
zeros of a cost or a count, and eight digits say little of a key); so is anything shaped like a provider key
(``sk-...``). Eight characters is the shortest piece that still says little about a key (a 51-character key
cut into pieces this size leaves no piece guessable) while an ordinary word rarely equals 8 consecutive
characters of a random key; secrets shorter than 8 characters are redacted whole only, and only as whole words
(a placeholder key of a local engine, "x" or "local", must not garble "checklist"). Error messages also lose
anything shaped like a provider key (``sk-...``, ``redact_keylike``); text written to files does not, since a
paper's own words ("key-findings") must survive.

Secrets are registered once per process (``register``), by the code that reads them from the
environment; ``redact`` then needs no argument, so writers far from the assessor apply the same rule.
Cost: one C-speed regex pass finds runs of the secrets' alphabet at least 8 long; only those runs are
compared, 8 characters at a time, against a set of the secrets' 8-character pieces.
"""

from __future__ import annotations

import re
import threading
from urllib.parse import urlsplit, urlunsplit

MIN_PIECE = 8
MASK = "***"
# Shapes of provider keys (OpenAI sk-/sk-proj-, Anthropic sk-ant-, generic key-/ak-): redacted even
# when the key was never registered (a key pasted into a prompt file, another provider's key).
_KEYLIKE = re.compile(r"\b(sk|rk|pk|key|ak)[-_][A-Za-z0-9_\-*]{6,}")

_lock = threading.Lock()
_secrets: set[str] = set()
_pieces: set[str] = set()
_runs: re.Pattern[str] | None = None


def register(secret: str | None) -> None:
    """Make ``redact`` hide ``secret`` and its long pieces from now on (idempotent)."""
    global _runs
    secret = (secret or "").strip()
    if not secret or secret in _secrets:
        return
    with _lock:
        _secrets.add(secret)
        if len(secret) >= MIN_PIECE:
            _pieces.update(p for p in (secret[i:i + MIN_PIECE] for i in range(len(secret) - MIN_PIECE + 1))
                           if not p.isdigit())
        alphabet = "".join(sorted({c for s in _secrets for c in s}))
        _runs = re.compile(f"[{re.escape(alphabet)}]{{{MIN_PIECE},}}")


def registered() -> bool:
    return bool(_secrets)


def _mask_pieces(text: str) -> str:
    """``text`` with every span covered by an 8-character piece of a secret masked."""
    if _runs is None or not _pieces:
        return text
    spans: list[tuple[int, int]] = []
    for run in _runs.finditer(text):
        start, end = run.span()
        i = start
        while i + MIN_PIECE <= end:
            if text[i:i + MIN_PIECE] in _pieces:
                lo, hi = i, i + MIN_PIECE
                while hi < end and text[hi - MIN_PIECE + 1:hi + 1] in _pieces:
                    hi += 1
                if spans and spans[-1][1] >= lo:
                    lo = spans.pop()[0]
                spans.append((lo, hi))
                i = hi - MIN_PIECE + 1
            else:
                i += 1
    if not spans:
        return text
    out, last = [], 0
    for lo, hi in spans:
        out += [text[last:lo], MASK]
        last = hi
    out.append(text[last:])
    return "".join(out)


def redact(text: str) -> str:
    """``text`` with every registered secret and every piece of one of at least ``MIN_PIECE``
    characters replaced by ``***``."""
    if not isinstance(text, str) or not text or not _secrets:
        return text
    for secret in _secrets:
        if secret in text:
            text = text.replace(secret, MASK) if len(secret) >= MIN_PIECE else _whole_word(secret).sub(MASK, text)
    return _mask_pieces(text)


def _whole_word(secret: str) -> re.Pattern[str]:
    """A short secret as a whole word only: a local engine takes any key, and a placeholder such as "x" or
    "local" masked inside words would garble every output ("chec***list" for a key "k")."""
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])")


def redact_keylike(text: str) -> str:
    """``redact``, and anything shaped like a provider key masked too: for error messages."""
    return _KEYLIKE.sub(MASK, redact(text))


def redact_bytes(data: bytes) -> bytes:
    """``redact`` for bytes in any ASCII-compatible encoding (UTF-8): latin-1 maps each byte to one
    character and back, so only the masked spans change."""
    if not _secrets:
        return data
    return redact(data.decode("latin-1")).encode("latin-1")


def redact_obj(obj: object) -> object:
    """Every string inside a JSON-like value (dicts, lists), redacted; other values unchanged."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {redact(k) if isinstance(k, str) else k: redact_obj(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [redact_obj(v) for v in obj]
    return obj


def public_url(url: str | None) -> str | None:
    """``url`` without credentials or query (``https://user:pass@host/v1?key=...``): safe to store."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


# Query parameters that carry a credential (``?token=``, ``?api_key=``, ``&sig=`` ...): their values are secrets.
_CREDENTIAL_PARAM = re.compile(r"(?i)token|key|secret|pass|pwd|auth|sig|credential|session|code")


def url_credentials(url: str | None) -> list[str]:
    """The secrets ``url`` carries that are long enough to look for (``MIN_PIECE``): the password of
    ``user:password@host`` and the values of credential-named query parameters. ``public_url`` leaves
    them out; a file that must stay public is checked for them (a user name alone is no secret, and a
    short one is an ordinary word)."""
    from urllib.parse import parse_qsl, unquote

    if not url:
        return []
    parts = urlsplit(url)
    found = [unquote(parts.password)] if parts.password else []
    found += [value for name, value in parse_qsl(parts.query) if _CREDENTIAL_PARAM.search(name)]
    return [x for x in dict.fromkeys(found) if len(x) >= MIN_PIECE]


# Shapes of the keys providers issue themselves (their master or project keys), by provider; first
# match names it. OpenAI's sk- shape is shared by keys that proxies mint (a LiteLLM virtual key is
# sk- and 22+ characters): such a key is refused as a provider's until its owner says it is capped.
PROVIDER_KEY_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern)) for name, pattern in (
        ("Anthropic (sk-ant-...)", r"sk-ant-[A-Za-z0-9_\-]{20,}"),
        ("OpenRouter (sk-or-...)", r"sk-or-[A-Za-z0-9_\-]{20,}"),
        ("OpenAI project key (sk-proj-...)", r"sk-proj-[A-Za-z0-9_\-]{20,}"),
        ("OpenAI service-account or admin key (sk-svcacct-/sk-admin-...)",
         r"sk-(?:svcacct|admin)-[A-Za-z0-9_\-]{20,}"),
        ("OpenAI-style (sk-...)", r"sk-[A-Za-z0-9_\-]{20,}"),
        ("Google AI (AIza...)", r"AIza[0-9A-Za-z_\-]{35}"),
        ("Groq (gsk_...)", r"gsk_[A-Za-z0-9]{20,}"),
        ("xAI (xai-...)", r"xai-[A-Za-z0-9]{20,}"),
        ("Hugging Face (hf_...)", r"hf_[A-Za-z0-9]{20,}"),
        ("Perplexity (pplx-...)", r"pplx-[A-Za-z0-9]{20,}"),
        ("Replicate (r8_...)", r"r8_[A-Za-z0-9]{20,}"),
        ("Fireworks (fw_...)", r"fw_[A-Za-z0-9]{20,}"),
        ("AWS access key (AKIA...)", r"(?:AKIA|ASIA)[0-9A-Z]{16}"),
    )
)


def provider_key_kind(key: str) -> str | None:
    """Which provider's own key ``key`` is shaped like (the whole key), or None."""
    key = key.strip()
    return next((name for name, shape in PROVIDER_KEY_SHAPES if shape.fullmatch(key)), None)


def find_provider_keys(text: str) -> list[str]:
    """Every run of ``text`` shaped like a provider's own key (to check a file before it ships)."""
    found: list[str] = []
    for _, shape in PROVIDER_KEY_SHAPES:
        found += [m.group(0) for m in re.finditer(rf"(?<![A-Za-z0-9_\-]){shape.pattern}", text)]
    return sorted(set(found))


# ------------------------------------------------------------------------------- text for a terminal
#
# What the tool prints comes partly from participants (file and member names, paper text, reviews an
# endpoint wrote). A terminal obeys what it is sent: escape sequences recolour, move the cursor, retitle
# the window or rewrite what was printed before; bidi overrides show a name reversed; a 24 MB name takes
# a table renderer minutes. So every string shown goes through ``for_terminal``: controls (C0 but tab
# and newline, DEL, C1) and bidi controls shown as visible escapes, and anything past ``limit``
# characters cut in the middle (the cut is made before anything else looks at the text).

TERMINAL_LIMIT = 4000  # characters of one string shown (a table cell, a message); a review fits
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match[str]) -> str:
    # The JSON spelling: inside a JSON document printed to a terminal it is the same character.
    return f"\\u{ord(match.group()):04x}"


def for_terminal(text: str, limit: int | None = TERMINAL_LIMIT) -> str:
    """``text`` safe to show on a terminal (see above); ``limit`` None: no cut."""
    if limit is not None and len(text) > limit:
        head = limit * 3 // 4
        tail = limit - head
        text = f"{text[:head]}...[{len(text) - limit:,} characters cut]...{text[-tail:]}"
    return _UNSAFE.sub(_visible, text)


def one_line(text: str, limit: int = TERMINAL_LIMIT) -> str:
    """``text`` as one terminal line: cut, made safe, line breaks as spaces (an error message)."""
    return " ".join(for_terminal(text, limit).split())


def note(text: str) -> None:
    """``text`` as one line for the person at the terminal, on stderr (stdout may be JSON a script
    reads)."""
    import sys

    print(one_line(text), file=sys.stderr)


class TerminalStream:
    """A text stream (``sys.stderr``, ``sys.stdout``) whose every write is made safe by
    ``for_terminal`` without a cut: the door for plain ``print``. A JSON document printed through it
    keeps its meaning (``json.dumps`` escapes controls itself, and a bidi control inside a string
    becomes its JSON escape). Rich consoles write to ``raw`` (see ``terminal_console``), since their own
    styling is escape sequences and their strings are made safe one by one."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(for_terminal(text, None))
        return len(text)

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def raw_stream(stream):
    return stream.raw if isinstance(stream, TerminalStream) else stream


def terminal_console(*, stderr: bool = False, **options):
    """A rich ``Console`` that shows every string it renders (printed text, table cells) through
    ``for_terminal``, writing to the real stream."""
    import sys

    from rich.console import Console

    class _SafeConsole(Console):
        def render_str(self, text: str, **kwargs):  # every str rich renders or measures comes here
            return super().render_str(for_terminal(text), **kwargs)

    stream = raw_stream(sys.stderr if stderr else sys.stdout)
    return _SafeConsole(file=stream, **options)
