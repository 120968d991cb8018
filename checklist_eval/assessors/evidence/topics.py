"""What a checklist question is about, read from its title (or question text), never from its id, so
the rules hold for every checklist version (2021 grouped ids "1a".., 2024 "1".."15", 2025/2026 "1".."16")."""

from __future__ import annotations

import re

from checklist_eval.models import ChecklistItem

# Titles are matched first (they are short and distinctive); the question text is the fallback, since
# e.g. the reproducibility question mentions "code and data" in passing. Order matters: first match wins.
_TOPICS: list[tuple[str, re.Pattern[str]]] = [
    (topic, re.compile(rx, re.I))
    for topic, rx in [
        ("llm", r"\bLLMs?\b|large language model"),
        ("irb", r"\bIRB\b|institutional review|participant risks|risks incurred by study participants"),
        ("human", r"crowdsourc|human subjects|instructions given to participants|participant compensation"
         r"|hourly wage|consent"),
        ("personal", r"personally identifiable|offensive content"),
        ("theory", r"theor|proofs?\b"),
        ("code", r"open access|code and data|data and code|code, data"),
        ("errorbars", r"error bars?|statistical significance"),
        ("compute", r"compute|computer resources"),
        ("details", r"training details|setting|hyperparameter"),
        ("reproducibility", r"reproduc"),
        ("licenses", r"licen[cs]e"),
        ("credits", r"credit|citing existing assets|cite the creators"),
        ("new_assets", r"new assets|documentation"),
        ("safeguards", r"safeguard"),
        ("ethics", r"code of ethics|ethics review|ethics guidelines"),
        ("impacts", r"societal impact|broader impact|\bimpacts?\b"),
        ("limitations", r"limitation"),
        ("claims", r"claims"),
    ]
]

EXPERIMENTAL = {"reproducibility", "details", "errorbars", "compute", "code"}


def topic_of(item: ChecklistItem) -> str | None:
    """The topic a question is about, from its title, else its question text; None if unknown."""
    for text in (item.title, item.question):
        for topic, rx in _TOPICS:
            if text and rx.search(text):
                return topic
    return None




# The words a passage about each topic uses: a justification's denial is about the topic when its
# clause holds one of them, and a cited section is about the topic when its text does.
TOPIC_WORDS: dict[str, re.Pattern[str]] = {
    topic: re.compile(rx, re.I)
    for topic, rx in {
        "theory": r"theor|proofs?\b|prove|lemma|proposition|corollary|assumptions?",
        "code": r"\bcode\b|data(?:set)?s?\b|repositor|github|open[- ]source|release|supplement",
        "errorbars": r"error bars?|standard (?:deviation|error)|confidence|significan|variance|std\b|±|seeds?\b"
                     r"|statistic|uncertaint|repeated runs|multiple runs",
        "compute": r"comput|GPU|CPU|TPU|hardware|memory|hours|run ?time|cluster",
        "details": r"hyper-?parameter|training|optimi[sz]er|learning rate|batch size|splits?\b|epochs?|setting",
        "reproducibility": r"reproduc|details|hyper-?parameter|code|instructions|implementation",
        "licenses": r"licen[cs]e|terms of (?:use|service)|copyright",
        "credits": r"cite|credit|creator|original (?:paper|authors?)|asset",
        "new_assets": r"new (?:asset|dataset|model|benchmark|code)|assets?|release|documentation",
        "safeguards": r"safeguard|misuse|risk|release|responsible",
        "human": r"human|participant|crowd|annotator|subject|user stud|worker",
        "irb": r"\bIRB\b|institutional review|ethic|approv|human|participant|subject",
        "limitations": r"limitation|shortcoming|weakness|assumption|fail",
        "impacts": r"impact|societ|misuse|harm|ethic|consequence",
        "llm": r"\bLLMs?\b|language model|GPT|Claude|Llama|Gemini",
        "claims": r"claim|contribution|abstract|introduction|result",
    }.items()
}
