"""Numbering: what each ``\\label`` displays as (sections, appendices, floats, theorems, equations)
and how a reference to it reads ("Section 4.2", "Tables 1 and 2")."""

from __future__ import annotations

import re
from dataclasses import dataclass

SECTION_LEVELS = {"part": 0, "chapter": 0, "section": 1, "subsection": 2, "subsubsection": 3}
_THEOREM_DEFAULTS = {
    "theorem": "Theorem",
    "thm": "Theorem",
    "lemma": "Lemma",
    "lem": "Lemma",
    "proposition": "Proposition",
    "prop": "Proposition",
    "corollary": "Corollary",
    "cor": "Corollary",
    "definition": "Definition",
    "defn": "Definition",
    "assumption": "Assumption",
    "remark": "Remark",
    "example": "Example",
    "conjecture": "Conjecture",
    "claim": "Claim",
}
NEWTHEOREM = re.compile(
    r"\\(?:newtheorem|declaretheorem)(\*?)\s*\{([^{}]+)\}\s*(?:\[([^\]]*)\])?\s*(?:\{([^{}]*)\})?\s*(?:\[([^\]]*)\])?"
)


@dataclass
class Target:
    """A numbered thing a \\label can point at."""

    kind: str  # "Section", "Appendix", "Figure", "Table", "Theorem", "Equation", "Algorithm", ...
    number: str
    title: str = ""

    @property
    def anchor(self) -> str:
        return f"Equation ({self.number})" if self.kind == "Equation" else f"{self.kind} {self.number}"


@dataclass
class TheoremKind:
    name: str
    counter: str
    within: str | None
    numbered: bool = True


def theorem_kinds(text: str) -> dict[str, TheoremKind]:
    kinds: dict[str, TheoremKind] = {}
    for m in NEWTHEOREM.finditer(text):
        star, env, shared, display, within = m.groups()
        if display is None:
            display = _THEOREM_DEFAULTS.get(env, env.capitalize())
        counter = env
        if shared and shared in kinds:
            counter = kinds[shared].counter
            within = kinds[shared].within
        elif shared and display is not None and not within:
            # \newtheorem{env}{Name}[within] puts the bracket after the name; the regex read it first.
            within = shared
        kinds[env] = TheoremKind(display.strip(), counter, within, numbered=not star)
    for env, display in _THEOREM_DEFAULTS.items():
        kinds.setdefault(env, TheoremKind(display, env, None))
    kinds.setdefault("proof", TheoremKind("Proof", "proof", None, numbered=False))
    return kinds


def alph(n: int) -> str:
    s = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        s = chr(65 + r) + s
    return s or "0"


# --- references to text ---------------------------------------------------------------------------

_CUSTOM_REF = re.compile(
    r"(?:sec|s|fig|f|tab|tbl|t|app|apx|appx|appendix|a|eq|e|thm|lem|alg|def|prop|cor|ssec|subsec)ref")
_LABEL_PREFIX = re.compile(r"([a-zA-Z]+)[:_\-]")
REF_MACROS = {"ref", "cref", "Cref", "autoref", "Autoref", "eqref", "cpageref", "pageref", "nameref",
               "vref", "Vref", "crefrange", "Crefrange", "subref", "labelcref"}


def is_custom_ref(name: str) -> bool:
    return bool(_CUSTOM_REF.fullmatch(name))


_PREFIX_KINDS = {
    "sec": "Section", "s": "Section", "ssec": "Section", "subsec": "Section", "chap": "Chapter",
    "fig": "Figure", "f": "Figure", "tab": "Table", "tbl": "Table", "t": "Table",
    "app": "Appendix", "apx": "Appendix", "appx": "Appendix", "appendix": "Appendix", "a": "Appendix",
    "eq": "Equation", "e": "Equation", "thm": "Theorem", "lem": "Lemma", "alg": "Algorithm",
    "def": "Definition", "prop": "Proposition", "cor": "Corollary", "ass": "Assumption",
}


def _kind_from_label(label: str) -> str | None:
    m = _LABEL_PREFIX.match(label)
    return _PREFIX_KINDS.get(m.group(1).lower()) if m else None


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("x") else "s")


def render_ref(macro: str, labels: list[str], targets: dict[str, Target]) -> str:
    """What a reader sees for a reference: ``\\ref`` gives the bare number, ``\\cref`` and friends
    the kind too ("Section 4.2", "Tables 1 and 2"). A label not in the source keeps its name, so an
    assessor can still see where the author pointed."""
    if macro == "crefrange" and len(labels) == 2:
        a, b = (targets.get(x) for x in labels)
        if a and b:
            return f"{_plural(a.kind)} {a.number} to {b.number}"
    if macro in ("eqref",):
        t = targets.get(labels[0]) if labels else None
        return f"({t.number})" if t else f"({labels[0] if labels else '?'})"
    if macro in ("pageref", "cpageref"):
        return "page ?"
    if macro == "nameref":
        t = targets.get(labels[0]) if labels else None
        return t.title if t and t.title else (labels[0] if labels else "?")
    custom_kind = None
    if macro not in REF_MACROS:
        custom_kind = _PREFIX_KINDS.get(macro[:-3]) if macro.endswith("ref") else None
        macro = "cref"
    if macro in ("ref", "subref", "vref", "Vref"):
        return ", ".join(targets[x].number if x in targets else f"[{x}]" for x in labels)
    # \cref-style: group consecutive labels of one kind
    parts: list[tuple[str, list[str]]] = []
    for label in labels:
        t = targets.get(label)
        kind = t.kind if t else (custom_kind or _kind_from_label(label) or "")
        shown = (f"({t.number})" if t.kind == "Equation" else t.number) if t else f"[{label}]"
        if parts and parts[-1][0] == kind:
            parts[-1][1].append(shown)
        else:
            parts.append((kind, [shown]))
    rendered = []
    for kind, numbers in parts:
        joined = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
        name = kind if len(numbers) == 1 else _plural(kind)
        rendered.append(f"{name} {joined}".strip())
    return ", ".join(rendered)

