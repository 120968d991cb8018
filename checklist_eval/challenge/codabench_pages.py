"""The pages of a Codabench bundle: written for participants (authors), not for developers.

Overview (G/A/T, C, R and S with their formulas, ``scoring.RULES``: the text of the module that computes them),
submission format (with the sample submission offered for download), evaluation (the assessor and
model, the spending cap, what "unverifiable" means), known issues of the assessor (its measured
false-positive rate, from ``assessor_figures.json``, and what it cannot check) and terms. One more
page, ``ORGANIZER.md``, is for the organizer only: it is not listed in ``competition.yaml``.
"""

from __future__ import annotations

import json
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources
from typing import Any

from checklist_eval.challenge.codabench_options import BundleOptions
from checklist_eval.challenge.scoring import rules_markdown

__all__ = ["PAGE_TITLES", "assessor_figures", "measured_summary", "organizer_page", "pages"]

PAGE_TITLES = {"overview": "Overview", "submission": "Submission format", "evaluation": "Evaluation",
               "known_issues": "Known issues of the assessor", "terms": "Terms"}


def assessor_figures() -> dict[str, Any]:
    """The recorded measurement of the heuristic assessor (how, on what, when: inside the file)."""
    text = resources.files("checklist_eval.challenge").joinpath("assessor_figures.json").read_text("utf-8")
    figures: dict[str, Any] = json.loads(text)
    return figures


def _pct(x: float) -> str:
    # Half up on the figure as recorded (0.0725 -> 7.3%), so a page and the documentation never differ by a
    # binary float's rounding.
    return f"{(Decimal(str(x)) * 100).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}%"


def _rate(figure: dict[str, Any]) -> str:
    low, high = figure["ci95"]
    return f"{_pct(figure['rate'])} ({figure['k']} of {figure['n']}; 95% interval {_pct(low)} to {_pct(high)})"


def measured_summary(f: dict[str, Any] | None = None) -> str:
    """The assessor's measured figures beside the trivial baselines, in the words the Known issues page
    and docs/offline-rules.md share (``assessor_figures.json``, written by the measuring script)."""
    h = (f or assessor_figures())["heuristic"]
    anchor, accept, held = h["anchor_accuracy"], h["accept_everything_accuracy"], h["held_out_accuracy"]
    return (f"The offline assessor flags {_rate(h['honest_flagged'])} of the authors' own answers of real "
            f"papers and catches {_rate(h['plants_detected'])} of the dishonest answers planted in them; "
            "accepting every answer would flag none and catch none. On the "
            f"{anchor['papers']} real papers of the 2024 challenge's public sample its verdicts agree with the "
            f"authors' own expected verdicts on {_pct(anchor['accuracy'])} of {anchor['items']} answers, where "
            f"accepting every answer agrees on {_pct(accept['accuracy'])} (the 2024 challenge's GPT-4 "
            f"assistant: {_pct(h['reference_gpt4_accuracy']['accuracy'])}); on the paper families held out of "
            f"every change of its rules, {_pct(held['accuracy'])} against {_pct(held['accept_everything'])}.")


def _judge(options: BundleOptions) -> str:
    if options.model:
        return (f"a large language model, `{options.model}`, asked one question of the checklist at a time with "
                "your whole paper in front of it")
    return ("an automatic assessor that reads your paper without any language model: it checks each answer "
            "and its justification against what the paper's text shows")


def overview(options: BundleOptions) -> str:
    return f"""# {options.title}

Every NeurIPS paper ends with a checklist: fifteen or so questions (limitations, error bars, compute,
code release, ethics review...) each answered Yes, No or NA with a justification. This challenge asks
two things of you: fill a checklist honestly and well, and try to fool the automatic assessor that
checks checklists.

## What you submit

- **G, a genuine paper**: a real (or realistic) paper with a carefully completed checklist.
- **A, an adversarial paper**: a version of a paper with deliberately wrong checklist answers (and,
  if you like, errors inserted in the paper) that you hope the assessor accepts.
- **T, the truth-adversarial paper**: the same paper as A with the truthful answers, whose
  justifications explain the errors planted in A. T is the ground truth for A.

You may submit G alone, or the triplet G, A, T.

## How you are scored

Each answer i of a paper gets c_i = 1 or 0 from the assessor's verdict; each paper gets a correctness
C (C_G, C_A and C_T); R measures how well the assessor resisted your A, with T as the truth; S combines
them. Exactly as the scoring program computes them:

{rules_markdown()}

R is high when the assessor caught your planted answers and accepted the others; you want it low. S
rewards a well-completed genuine paper (high C_G), an adversarial paper whose wrong answers pass (high
C_A, low R) and a truthful T (high C_T): A cannot be made to look clever by a T full of reversed
answers, since C_T would then fall. A question T leaves TODO counts against R like any other: leave
none.

The leaderboard shows S, C_G, C_A, C_T and R; it ranks by S.
"""


def submission(options: BundleOptions) -> str:
    limit = options.max_submissions_per_day
    return f"""# Submission format

Upload **one zip file** holding your papers, named by role:

| file or folder name starts with | paper |
| --- | --- |
| `genuine_` | G |
| `adversarial_` | A |
| `truth_adversarial_` | T |

Each paper is one of:

- a single `.tex` file with the paper and its checklist;
- a folder with a LaTeX project (the main file and the files it includes);
- a `.zip` or `.tar.gz` of such a project;
- a PDF.

The checklist must be the NeurIPS paper checklist (the 2021/22, 2024, 2025 or 2026 version), filled
with `\\answerYes{{}}`, `\\answerNo{{}}` or `\\answerNA{{}}` and a justification after each. A, T (and G)
must use the same checklist version. Send the whole paper, not the checklist alone: the assessor checks
your answers against the paper's text, and answers it cannot check against a body are counted as
described on the Evaluation page.

## Sample submission

The phase's **starting kit** (in the Files tab) is a complete G, A, T triplet made up for the
purpose (a short synthetic paper, not a real one): the zip you download can be submitted as it is.
It holds `genuine_sga.tex`, `adversarial_sga.tex` and `truth_adversarial_sga.tex`. Its A paper
removes the limitations section, the error bars and the compute statement from the genuine paper
but still answers Yes to those three questions; its T paper answers No to them and says why.

## Limits

- At most {limit} scored submission(s) per day and phase.
- A paper, once unpacked, may hold at most 50 MB per file and 200 MB in all; an archive that expands far
  beyond its own size is refused. A paper that takes the reader more than two minutes, or more memory
  than allowed, fails that submission with a one-line message; other submissions are not affected.
- Text a reader of the paper cannot see (white text, microscopic fonts, text hidden behind shapes) is
  removed before the assessor reads the paper and is flagged on your detailed results.
"""


def evaluation(options: BundleOptions) -> str:
    if options.model:
        cap = (f"The organizers' access to the model is capped at **{options.spend_cap_usd:g} USD** for the whole "
               "competition" if options.spend_cap_usd is not None else
               "The organizers' access to the model runs on their own compute with its own spending limit")
        cost = (f"\n\n## Cost cap\n\n{cap}. When the cap is reached, submissions can no longer be scored "
                "and fail with a message saying so; the organizers then announce what happens next. Each "
                "submission costs the model about 45 questions (15 per paper).")
    else:
        cost = ("\n\n## Cost\n\nThe assessor runs without any paid service: there is no cost cap and "
                "scoring a submission takes a minute or two.")
    return f"""# Evaluation

Every answer of every paper you submit is judged by {_judge(options)}. The assessor, its settings and
its instructions are the same for every participant and do not change during a phase.

For each answer the assessor gives a verdict, the evidence it found and a review. The verdict decides
c_i (see the Overview):

- **correct**: c_i = 1;
- **must fix** (the answer is wrong as it stands): c_i = 0;
- **unverifiable**: the evidence for the answer could not be checked against the text we have (for
  example, the justification points to an appendix that was not submitted, or to material outside the
  paper). An unverifiable answer keeps **c_i = 1**: an answer counts against you only when it is found
  incorrect. Your detailed results mark such answers apart, so you know which ones a human reviewer
  could still question.

Your detailed results also give each answer one evidence state: **contradicted** (a must fix, with the
evidence), **supported** (a passage of your paper backs the answer, shown with its page or file:line)
or **unverified** (no passage was found either way: c_i = 1, but nothing checked it), with the counts.

Answers left as TODO, and questions missing from the checklist, are c_i = 0.

## Your results

After scoring, the leaderboard shows S, C_G, C_A, C_T and R. The **detailed results** of your
submission (titled with your genuine paper's title) open with what to act on, per paper: for G and T
the contradicted answers (to fix) and the unverified ones (to read yourself), each with its page or
file:line; for A the **planted answers caught** (the answers that differ from T's and that the assessor
judged wrong: each raises R) and the planted answers that passed. When S is 0 they say which factor is
0. Then, per question, your answer, the verdict, the evidence and the review, and any hidden text
found.{cost}

## Appeals

The organizers keep every verdict with the assessor's full reasoning. If you think a verdict is wrong,
write to them naming the submission, the paper and the question.
"""


def _in_practice(rate: float) -> str:
    if rate <= 0:
        return "In this measurement no honest answer was flagged."
    return f"In practice about one honest answer in {round(1 / rate):,} is flagged."


def known_issues(options: BundleOptions) -> str:
    f = assessor_figures()
    h = f["heuristic"]
    if options.model:
        measured = (f"This competition's assessor is the model `{options.model}`. Its false-positive rate "
                    "was not measured by the organizers before the competition; the figures below are those "
                    "of the offline assessor that the same scoring program also contains, and show the kind "
                    "of errors any assessor makes. Expect the model to make errors of its own.")
    else:
        measured = "This competition's assessor is the offline one measured below."
    return f"""# Known issues of the assessor

No automatic assessor is right every time. {measured}

## How often it flags an honest answer

Measured on {f['material']} ({f['measured']}):

{measured_summary(f)}

- Some of the honest answers it flags may really be wrong (nobody checked them one by one), so its
  true rate of false positives is at most the one above.
- With the checklist alone (no paper body), fewer answers are flagged
  ({_pct(h['honest_flagged_without_body']['rate'])}), because most answers cannot be checked at all.
- Answers it could not verify: {_pct(h['unverifiable']['rate'])}.
- Agreeing with the authors' expected verdicts is a weak test of an assessor: their key also marks
  down honest answers whose justification is thin, which this assessor only suggests improving.

{_in_practice(h['honest_flagged']['rate'])} A flagged answer of your G or T
paper lowers C_G or C_T; read the review on your detailed results: it says what the assessor looked for
and did not find, usually a place the justification names that the paper does not have, or something
the answer claims that the paper never shows.

## What it cannot check

- Anything outside the submitted text: whether code or data are really released at a link, whether an
  ethics board really approved the study, whether experiments were really run as described.
- Figures and images: only their captions and the text around them are read.
- Whether a proof is correct, or whether error bars are computed properly: only that they are there.
- For a PDF, text hidden in ways not detected: text covered by a shape inside a figure, text partly
  outside the page, text hidden on a rotated page's layer.
- Wording it was not built for: an answer can be judged wrong because its justification says the
  right thing in unusual words. A justification that names the section, table or appendix where the
  evidence is gets the most reliable verdict.
"""


def terms(options: BundleOptions) -> str:
    return f"""# Terms

- At most {options.max_submissions_per_day} scored submission(s) per day and phase; only your last
  scored submission appears on the leaderboard.
- Submissions are scored automatically. The organizers may review verdicts after an appeal and rescore
  with the corrected verdicts; the corrected scores replace the automatic ones.
- Submit only papers you have the right to share. Your papers are read by the assessor
  {"and sent to the model's provider" if options.model else "on the organizers' computers"}; they are
  not published by the organizers.
- Do not try to break, slow down or exhaust the scoring service (archives built to expand, papers built
  to hang a reader, attempts to make the assessor spend): such submissions are refused and may be
  excluded. Text addressed to the assessor rather than to readers (prompt injection) is flagged on your
  detailed results; the organizers may disqualify a submission that relies on it.
- Rankings are by S; ties are ordered by C_G, then C_A, C_T and R.
"""


def pages(options: BundleOptions) -> dict[str, str]:
    """Page file name (without ``.md``) -> markdown, in the order of ``PAGE_TITLES``."""
    builders = {"overview": overview, "submission": submission, "evaluation": evaluation,
                "known_issues": known_issues, "terms": terms}
    return {name: builders[name](options) for name in PAGE_TITLES}


def _host_path(container_path: str) -> str:
    """A path under /app/data in the container, as seen under HOST_DIRECTORY/data on the worker host."""
    return container_path.removeprefix("/app/data/")


def organizer_page(options: BundleOptions, *, wheel: str, credential: str) -> str:
    """``ORGANIZER.md``: how this bundle runs, for whoever uploads it (not shown to participants)."""
    phases = ", ".join(options.phases)
    llm = _model_paragraph(options, credential)
    return f"""# For the organizer (not shown to participants)

Phases: {phases}. Image: `{options.docker_image}`.

## How scoring runs

The compute worker starts `{options.docker_image}` and runs
`python3 /app/program/score.py /app/input /app/output`. The first time in a container, `score.py`
installs checklist-eval from `scoring_program/{wheel}` (carried in this bundle) with pip; its
dependencies (pydantic, pandas, numpy, openai, pypdfium2...) come from PyPI, so the worker needs
outbound access to PyPI, as Codabench's public workers have. This adds about half a minute per
submission. To skip it, build an image from this folder with the `Dockerfile` beside this file and name
it when you export again (`--docker-image`).

## The model and its key

{llm}

A capped key is a key that cannot spend past a limit you set. The tested way is LiteLLM's proxy in
front of your provider: the proxy holds the provider's key, and you hand the platform a virtual key
with its own budget and rate limits.

    # litellm_config.yaml
    model_list:
      - model_name: {options.model or 'gpt-4o-mini'}
        litellm_params:
          model: openai/{options.model or 'gpt-4o-mini'}
          api_key: os.environ/OPENAI_API_KEY
    general_settings:
      master_key: os.environ/LITELLM_MASTER_KEY
      database_url: os.environ/DATABASE_URL

    litellm --config litellm_config.yaml --port 4000
    curl -s http://PROXY:4000/key/generate -H "Authorization: Bearer $LITELLM_MASTER_KEY" \\
      -H 'Content-Type: application/json' \\
      -d '{{"models": ["{options.model or 'gpt-4o-mini'}"], "max_budget": 50, "rpm_limit": 60,
           "tpm_limit": 200000, "duration": "60d"}}'

Virtual keys need the proxy's database (PostgreSQL, `DATABASE_URL`) and a master key starting with
`sk-`. Past `max_budget` the proxy refuses the key's calls, and the submissions being scored fail
with one line naming the refusal; `rpm_limit`/`tpm_limit` answers are 429s, which the scoring program
waits out and retries. Check what the key has spent with `GET /key/info?key=...`.

The reply's `key` (an `sk-...` string) goes into a file, and the export is
`checklist-eval codabench export --model M --base-url https://PROXY/v1 --api-key-file key.txt
--key-is-capped --spend-cap 50`. A key shaped like a provider's own (OpenAI `sk-proj-...`, Anthropic
`sk-ant-...`, Google `AIza...`) is refused unless `--key-is-capped` says it is capped.
"""


def _model_paragraph(options: BundleOptions, credential: str) -> str:
    """Which model the phases use and where its key is: none, the capped key in the bundle, or the
    organizer's own queue reading it from the worker host."""
    if not options.model:
        llm = "The phases use the offline assessor: no model, no key, no cost."
    elif credential == "bundle":
        llm = (f"The phases use `{options.model}` at `{options.base_url or 'https://api.openai.com/v1'}` with "
               f"the capped key written in each phase's `reference_data/api_key`. **Spending cap: "
               f"{options.spend_cap_usd:g} USD** (the cap you set on that key; the proxy refuses calls past it). "
               "Anyone who can download the bundle or the reference data (co-organizers, Codabench admins) "
               "can use the key up to that cap: revoke it when the competition ends.")
    else:
        llm = (f"The phases use `{options.model}` at `{options.base_url or 'https://api.openai.com/v1'}`, on your "
               f"own Codabench queue `{options.queue}`. No key is in the bundle: the scoring program reads it from "
               f"`{options.worker_key_path}` inside the container. Codabench's compute worker starts the scoring "
               "container with no environment of yours (only PYTHONUNBUFFERED); what it does mount, read-only "
               "at `/app/data`, is the folder `data` under the worker's HOST_DIRECTORY. Put the key there, on "
               "every worker host of the queue, readable by the user the containers run as:\n\n"
               f"    install -m 0644 key.txt \"$HOST_DIRECTORY/data/{_host_path(options.worker_key_path)}\"\n\n"
               "The key never leaves your machines. "
               + (f"**Spending cap: {options.spend_cap_usd:g} USD.**" if options.spend_cap_usd is not None
                  else "Cap its spending at your provider or proxy: the bundle states no cap."))
    if options.endpoint_url:
        llm += ("\n\nThe endpoint's address as you gave it carries credentials or a query: the files above show "
                "it without them, and the whole address is in each phase's `reference_data/endpoint_url` "
                "(beside `config.json`), nowhere else in the bundle.")
    return llm
