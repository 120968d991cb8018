"""What the loopback server's model says: verdicts that are a pure function of the prompt, so a rerun or a
faulty run gives the same verdicts, and the reply text and logprobs they are rendered into.

The question block is the last user message; the paper is everything before it. Rules, in order:

1. answer TODO / missing, or an empty justification            -> incorrect (p 0.05-0.15)
2. the question lists offline facts ("[F1] ..."): each goes into the review (must_fix), unless the
   justification holds "[mock:ignore-facts]" and nothing re-asked about them -> correct, facts ignored
3. the justification points somewhere ("Section 4", "Table 2", "Appendix B", "Fig. 3", "§5"):
   every pointer exists in the paper part                       -> correct   (p 0.85-0.97)
   some pointer does not exist                                   -> incorrect (p 0.05-0.20)
4. otherwise a tie-break on sha256 of the question block up to the justification: u < 0.5 -> correct (p 0.55-0.75),
   else incorrect (p 0.25-0.45)

The verdict token's logprob is log(p) (or log(1-p) for "false"), with both alternatives in
``top_logprobs``. Tokens are a rough word-piece split (about 4-6 characters each).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

__all__ = ["FAKE_QUOTE", "mock_findings", "mock_rewrite", "mock_verdict", "render_reply", "sample_paper",
           "counting_array", "grammar_padded", "running_string", "text_of", "tokenize", "unit_interval",
           "verdict_logprobs"]

_TOKEN = re.compile(r"[ ]?[A-Za-z]{1,10}|[ ]?\d{1,3}|[ ]?[^\sA-Za-z\d]|\s+")


def tokenize(text: str) -> list[str]:
    """Deterministic word-piece split; joining the pieces gives back the text."""
    return _TOKEN.findall(text)


def unit_interval(text: str) -> float:
    """A number in [0, 1) drawn from the text alone: the mock's one source of pseudo-randomness."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") / 2**64


_ANSWER = re.compile(r"(?im)^[^\n]*\banswer\s*:\s*\[?\s*(yes|no|n/?a|todo|\(missing\))")
_JUSTIFICATION = re.compile(r"(?im)^[^\n]*\bjustification\s*:[ \t]*(.*)$")
_POINTER = re.compile(r"(Section|Sec\.|Table|Figure|Fig\.|Appendix|App\.|§)\s*~?\s*([A-Z](?:\.\d+)*|\d+(?:\.\d+)*)",
                      re.I)
_KIND_WORDS = {"sec.": "section", "fig.": "figure", "app.": "appendix", "§": "section"}


def _pointer_exists(kind: str, number: str, paper: str) -> bool:
    kind = _KIND_WORDS.get(kind.lower(), kind.lower())
    num = re.escape(number)
    spellings = {"section": r"(?:section|sec\.|§)", "figure": r"(?:figure|fig\.)", "appendix": r"(?:appendix|app\.)"}
    if re.search(rf"{spellings.get(kind, kind)}\s*~?\s*{num}\b", paper, re.I):
        return True
    if kind in ("section", "appendix"):  # a heading line "4.2 Results" / "B Proofs" / "# 4.2 Results"
        return bool(re.search(rf"(?m)^\s*#*\s*{num}\.?\s+[A-Z]", paper))
    return False


_PASSAGE = re.compile(r"(?m)^\[P(\d+)\] ")


def mock_verdict(messages: list[dict[str, Any]]) -> tuple[bool, float, str, list[str]]:
    """(correct, p_correct, review, evidence) for a chat request; see the module docstring. A question
    block listing passages ("[P1] ...", assess-v4) gets the first one cited as its evidence's first item,
    or "[P0]" when the justification holds "[mock:cite-none]"."""
    correct, p, review, evidence = _verdict(messages)
    question = text_of(messages[-1].get("content")) if messages else ""
    asking = [text_of(m.get("content")) for m in messages if m.get("role") == "user"
              and _ANSWER.search(text_of(m.get("content")))]
    question = asking[-1] if asking else question
    if _PASSAGE.search(question):
        evidence = ["[P0]" if "[mock:cite-none]" in question else "[P1]", *evidence]
    return correct, p, review, evidence


def _verdict(messages: list[dict[str, Any]]) -> tuple[bool, float, str, list[str]]:
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return False, 0.1, "- No question found in the request.", []
    # The question is the last user message that asks one (a re-ask appends the validation error after it).
    asking = [i for i in users if _ANSWER.search(text_of(messages[i].get("content")))]
    last = asking[-1] if asking else users[-1]
    question = text_of(messages[last].get("content"))
    paper = "\n".join(text_of(m.get("content")) for i, m in enumerate(messages) if i < last)
    answer_m = _ANSWER.search(question)
    answer = answer_m.group(1).lower() if answer_m else ""
    just_m = _JUSTIFICATION.search(question)
    justification = just_m.group(1).strip() if just_m else ""
    # Tie-break on the block up to the justification, so the format instructions that follow it
    # (which differ per structured-output strategy) do not change the verdict.
    u = unit_interval(question[: just_m.end()] if just_m else question)
    if answer in ("", "todo", "(missing)") or justification in ("", "(empty)"):
        return False, 0.05 + 0.1 * u, "- The answer is missing, TODO, or has no justification: justify it.", []
    facts = _FACT.findall(question)
    if facts:
        return _facts_verdict(messages, last, justification, facts, u)
    pointers = _POINTER.findall(justification)
    if pointers:
        missing = [f"{k} {n}" for k, n in pointers if not _pointer_exists(k, n, paper)]
        if missing:
            return (False, 0.05 + 0.15 * u,
                    "\n".join(f"- The justification points to {m}, which the paper does not have." for m in missing),
                    [])
        found = [f"{k} {n}" for k, n in pointers]
        return True, 0.85 + 0.12 * u, f"- Correct: the paper supports the answer at {', '.join(found)}.", found
    if u < 0.5:
        return True, 0.55 + 0.4 * u, "- Plausibly correct; name the section that shows it.", []
    return False, 0.25 + 0.4 * (u - 0.5), "- Not shown in the paper; point to the section that supports it.", []


_FACT = re.compile(r"(?m)^\[F(\d+)\][ \t]*(.+)$")


def _facts_verdict(messages: list[dict[str, Any]], last: int, justification: str, facts: list[tuple[str, str]],
                   u: float) -> tuple[bool, float, str, list[str]]:
    """A question listing offline facts ([F1] ...): an obedient model puts each in must_fix. A
    justification holding "[mock:ignore-facts]" gets a verdict that ignores them, until a later
    message names them again (the assessor's one re-ask)."""
    told = any(m.get("role") == "user" and "offline fact" in text_of(m.get("content")) for m in messages[last + 1:])
    if "[mock:ignore-facts]" in justification and not told:
        return True, 0.8 + 0.1 * u, "- The answer looks consistent with the paper.", []
    return False, 0.1 + 0.1 * u, "\n".join(f"- [F{n}] {text.strip()}" for n, text in facts), []


def mock_rewrite(messages: list[dict[str, Any]]) -> str | None:
    """The adversary's rewrite request (prompts/adversary-v1): the justification plus a pointer to a
    section most papers have, which is what fools the mock's own verdict rule. None for other requests."""
    if not messages or "You rewrite the justification" not in text_of(messages[0].get("content")):
        return None
    m = re.search(r"(?m)^Current justification:[ \t]*(.*)$", text_of(messages[-1].get("content")))
    return f"{m.group(1).strip() if m else ''} The details are given in Section 2.".strip()


FAKE_QUOTE = "All experiments were repeated on 64 TPU pods for three weeks"


def mock_findings(messages: list[dict[str, Any]], correct: bool, review: str) -> tuple[list[str], list[str]] | None:
    """must_fix / suggestions when the request's format asks for them (assess-v2), else None. A question
    whose justification holds "[mock:omit-must-fix]" first gets an incorrect verdict with an empty
    must_fix; only a re-ask that sends the validation error back gets a usable one."""
    prompt = "\n".join(text_of(m.get("content")) for m in messages)
    if "must_fix" not in prompt and "Must fix:" not in prompt:
        return None
    questions = [text_of(m.get("content")) for m in messages if m.get("role") == "user"
                 and _ANSWER.search(text_of(m.get("content")))]
    points = [ln.strip().removeprefix("- ") for ln in review.splitlines() if ln.strip()]
    told = any(m.get("role") == "user" and "must_fix" in text_of(m.get("content")) and "could not be used"
               in text_of(m.get("content")) for m in messages)
    if questions and "[mock:omit-must-fix]" in questions[-1] and not told:
        return [], points
    return (points, []) if not correct else ([], points)


def text_of(content: Any) -> str:
    """A message's text, whether its content is a string or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def render_reply(fmt: str, correct: bool, p: float, review: str, evidence: list[str],
                 findings: tuple[list[str], list[str]] | None = None) -> str:
    if fmt in ("json_schema", "json_object", "fenced_json"):
        extra = {"must_fix": findings[0], "suggestions": findings[1]} if findings else {}
        obj = json.dumps({"review": review, "evidence": evidence, **extra, "correct": correct,
                          "p_correct": round(p, 3)})
        return f"```json\n{obj}\n```" if fmt == "fenced_json" else obj
    if findings:
        review += "".join(f"\n{head}:\n" + ("\n".join(f"- {x}" for x in items) or "- none")
                          for head, items in (("Must fix", findings[0]), ("Suggestions", findings[1])))
    return (f"Review:\n{review}\nEvidence: {'; '.join(evidence) or '-'}\n"
            f"Verdict: {'correct' if correct else 'incorrect'}\nConfidence: {p:.2f}")

# What llama.cpp's JSON grammar lets a small model write between tokens, as the real llama-server with Gemma 3
# 270M wrote it: a newline and ten " \t" before every key, colon, value and closing brace. Over half the
# reply's tokens were this whitespace.
GRAMMAR_PAD = "\n" + " \t" * 10


def grammar_padded(text: str) -> str:
    """A JSON object reply re-written with the whitespace a grammar-constrained small model fills it with."""
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    if not isinstance(obj, dict):
        return text
    members = [f"{json.dumps(k)}{GRAMMAR_PAD}:{GRAMMAR_PAD}{json.dumps(v)}" for k, v in obj.items()]
    return "{" + GRAMMAR_PAD + f",{GRAMMAR_PAD}".join(members) + GRAMMAR_PAD + "}"


def counting_array(review: str, budget: int) -> str:
    """The start of a reply that writes its review, then counts in the evidence array until ``budget``
    tokens are spent: what a grammar that leaves the array unbounded let Gemma 3 270M write."""
    text = json.dumps({"review": review})[:-1] + ', "evidence": ['
    spent = len(tokenize(text))
    n = 0
    while spent < budget:
        n += 1
        item = f'"{n}", '
        spent += len(tokenize(item))
        text += item
    return text


def running_string(budget: int) -> str:
    """The start of a compact reply whose first must_fix item runs ("1000000...") until ``budget`` tokens."""
    head = '{"review": "1", "evidence": ["1", "1", "1", "1", "1"], "must_fix": ["1'
    return head + "0" * max(0, 3 * (budget - len(tokenize(head))))  # the mock's pieces hold up to 3 digits


def verdict_logprobs(tokens: list[str], text: str, correct: bool, p: float, top: int) -> dict[str, Any]:
    m = re.search(r'"correct"\s*:\s*(true|false)|Verdict:\s*(correct|incorrect)', text)
    target = m.start(1) if m and m.group(1) else (m.start(2) if m else -1)
    json_mode = bool(m and m.group(1))
    yes, no = ("true", "false") if json_mode else ("correct", "incorrect")
    content = []
    offset = 0
    for tok in tokens:
        start, offset = offset, offset + len(tok)
        if start <= target < offset:
            lead = tok[: len(tok) - len(tok.lstrip())]
            alts = [(lead + yes, math.log(max(p, 1e-9))), (lead + no, math.log(max(1 - p, 1e-9)))]
            alts.sort(key=lambda a: -a[1])
            lp = alts[0][1] if alts[0][0].strip() == tok.strip() else alts[1][1]
        else:
            alts = [(tok, -0.001)]
            lp = -0.001
        content.append({"token": tok, "logprob": lp, "bytes": list(tok.encode("utf-8")),
                        "top_logprobs": [{"token": t, "logprob": alt, "bytes": list(t.encode("utf-8"))}
                                         for t, alt in alts[: max(top, 0)]]})
    return {"content": content, "refusal": None}


def sample_paper(n_questions: int = 6, body_chars: int = 4000, source: str = "sample.tex",
                 answers: list[str] | None = None) -> Any:
    """A small Paper built directly from the models, for tests and drills without the parser.

    The body has numbered sections 1-3 and a Table 1; justifications point at "Section 2" (exists),
    "Appendix Z" (does not), or nowhere, so the mock server's rules give a mix of verdicts.
    """
    from checklist_eval.models import Checklist, ChecklistItem, Paper, normalize_answer

    filler = "We study calibrated assessment of checklists and report results with error bars. "
    sections = ["1 Introduction", "2 Method", "3 Experiments", "Table 1: Main results."]
    body_parts: list[str] = []
    i = 0
    while sum(len(p) for p in body_parts) < body_chars:
        body_parts.append(f"{sections[i % len(sections)]}\n{filler * 4}")
        i += 1
    pointers = ["See Section 2 for the method.", "Details in Appendix Z.", "We discuss it in the paper.",
                "Reported in Table 1.", "Not applicable to this work.", "Yes, throughout."]
    answers = answers or ["Yes", "Yes", "No", "Yes", "NA", "Yes"]
    items = [
        ChecklistItem(id=f"q{k + 1}", title=f"Question {k + 1}", question=f"Does the paper satisfy item {k + 1}?",
                      guidelines=["Answer Yes only with evidence in the paper."],
                      answer=normalize_answer(answers[k % len(answers)]), justification=pointers[k % len(pointers)])
        for k in range(n_questions)
    ]
    return Paper(source=source, format="latex", title="A sample paper", abstract="We assess checklists.",
                 body="\n\n".join(body_parts), checklist=Checklist(id="neurips-2024", items=items))
