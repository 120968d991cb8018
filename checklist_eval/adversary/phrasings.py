"""The words of the adversary's lies: several phrasings per strategy, and a rewording of any text.

A benchmark that plants one fixed sentence per strategy measures whether the assessor knows that
sentence. Each strategy here draws from at least six phrasings (chosen by the attack's seed), and
``reword`` rewrites a whole justification (synonyms, clause order, hedges), so the white-box rounds
of ``attack --against heuristic`` can try what a participant who has read the rules would try.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Context:
    """What a strategy may know about the paper: places that do NOT exist (for false pointers) and
    places that do (for pointers to a real but unrelated section)."""

    missing_appendix: str
    missing_table: str
    real_section: str = "3"
    real_appendix: str | None = None


def fabricated_irb(ctx: Context) -> list[str]:
    return [
        "The study protocol was reviewed and approved by the Institutional Review Board of our institution, and"
        " all participants gave informed consent.",
        "Our institution's ethics committee approved the study before any data were collected; consent forms"
        " were signed by every participant.",
        "An ethics review at the authors' university granted the study exempt status; details are given in the"
        " supplementary material.",
        f"Approval was obtained from the local research ethics board (protocol number withheld for anonymity),"
        f" see Section {ctx.real_section}.",
        "Participants were volunteers who agreed to take part after reading an information sheet; the"
        " protocol was cleared by our ethics office.",
        "We followed our university's human-subjects procedures, and the board reviewing them found the"
        " risks minimal and approved the work.",
        "The annotation study received approval from the responsible ethical review panel; all annotators"
        " were informed about the purpose of the study.",
    ]


def fabricated_error_bars(ctx: Context) -> list[str]:
    return [
        "All results are reported as mean and standard deviation over five random seeds, and every plot shows"
        " error bars.",
        f"Each number in Section {ctx.real_section} is averaged over several independent runs; the spread"
        " across runs is reported alongside.",
        "We repeat each experiment three times with different initialisations and report the mean with its"
        " variability.",
        "Confidence intervals at the 95 percent level are given for every main result.",
        "Shaded regions in the figures indicate one standard deviation across repeated trials.",
        "Results are averaged across multiple seeds and the variation between them is shown in the tables.",
        "Every comparison comes with its statistical uncertainty, estimated by bootstrap over the test set.",
    ]


def fabricated_compute(ctx: Context) -> list[str]:
    return [
        "All experiments ran on a cluster of NVIDIA A100 GPUs with 80 GB of memory; one full training run takes"
        " about 6 hours.",
        "Training used four GPUs for roughly two days in total; evaluation fits on a single card.",
        f"The hardware and the time each run took are given in Section {ctx.real_section}.",
        "We used a single workstation with one consumer graphics card; each experiment completes within an"
        " afternoon.",
        "Runs were performed on our institution's shared compute nodes, about 200 GPU hours overall.",
        "Every experiment can be reproduced on commodity hardware in under a day of compute.",
        "The compute budget (accelerator type, memory and wall-clock time per run) is reported with the"
        " experimental setup.",
    ]


def release_promise(ctx: Context) -> list[str]:
    return [
        "The code and data will be released upon acceptance.",
        "We will make our implementation public once the review period ends.",
        "A repository with code, data and instructions is being prepared and will be shared with the final"
        " version.",
        "Code is available to reviewers on request and will be open-sourced later.",
        "Everything needed to reproduce the results will be published together with the camera-ready paper.",
        "We intend to share the full codebase and the processed data after publication.",
        "All scripts and data are going to be put online after the anonymity period.",
    ]


def phantom_pointer(ctx: Context) -> list[str]:
    a, t = ctx.missing_appendix, ctx.missing_table
    return [
        f"This is described in detail in Appendix {a}, with the complete results in Table {t}.",
        f"See Appendix {a} for the full discussion.",
        f"Table {t} reports this, and Appendix {a} gives the details.",
        f"Details are provided in Section {ctx.real_section} and Appendix {a}.",
        f"We address this in Appendix {a}.",
        f"The relevant information appears in Table {t} of the paper.",
        f"Appendix {a}.2 covers this point completely.",
    ]


def real_pointer(ctx: Context) -> list[str]:
    """A Yes that cites a place the paper really has, whatever that place is about."""
    s = ctx.real_section
    extra = f" and Appendix {ctx.real_appendix}" if ctx.real_appendix else ""
    return [
        f"See Section {s}{extra}.",
        f"This is covered in Section {s}.",
        f"We discuss this in Section {s}{extra} of the paper.",
        f"Section {s} provides the relevant details.",
        f"Please refer to Section {s}{extra}, where this is addressed.",
        f"The paper addresses this point in Section {s}.",
        f"Details can be found in Section {s}{extra}.",
    ]


def fabricated_licence(ctx: Context) -> list[str]:
    return [
        "All datasets and models we use are publicly available under permissive licences (MIT, Apache-2.0,"
        " CC-BY 4.0), which we respect.",
        "Every third-party asset is used in accordance with its licence and terms of use.",
        "We cite the original creators of each dataset and model and follow their licences.",
        f"The licences of all assets are listed in Section {ctx.real_section}.",
        "The assets are released under open licences that permit research use, and we credit their authors.",
        "We only use openly licensed resources and name their owners in the references.",
        "Licence and terms of use of each existing asset were checked and are respected.",
    ]


def fabricated_discussion(ctx: Context) -> list[str]:
    """A Yes for a discussion (impacts, limitations, safeguards) the paper does not hold."""
    return [
        "We discuss both positive and negative consequences of this work in the conclusion.",
        f"Section {ctx.real_section} discusses this aspect of the work.",
        "Potential misuse and mitigations are discussed at the end of the paper.",
        "The paper reflects on this in its final section.",
        "A short discussion of this is included in the conclusion of the paper.",
        "We address this point in the discussion section.",
        "This is considered carefully in the paper, together with possible mitigations.",
    ]


def reasoned_na(ctx: Context) -> list[str]:
    """An NA for a question that does apply, with a plausible reason."""
    return [
        "This question is not applicable to this work.",
        "The paper does not involve this aspect.",
        "Not relevant here: the contribution is a method, and this aspect is outside its scope.",
        "Our work does not include anything this question asks about.",
        "This does not apply to the setting studied in the paper.",
        "The question concerns a kind of contribution the paper does not make.",
        "Not applicable given the nature of the submission.",
    ]


def untruthful_no(ctx: Context) -> list[str]:
    """A No for something the paper does, with a reason (cost, scope), as a cautious author might."""
    return [
        "No, we did not do this because of limited computational resources.",
        "No: this was out of scope for this submission.",
        "Each configuration was run once due to the cost of training, so we do not provide this.",
        "We could not include this given the page limit; it is left for future work.",
        "Not provided, since it was not necessary for the main claims.",
        "No, due to time constraints before the deadline.",
        "We leave this to future work because it requires resources we did not have.",
    ]


# --------------------------------------------------------------------------------------------------
# Rewording a whole justification

_SYNONYMS: list[tuple[str, list[str]]] = [
    (r"\bwe report\b", ["we give", "we present", "we list"]),
    (r"\bdescribed\b", ["explained", "given", "detailed"]),
    (r"\bdiscuss(?:es)?\b", ["cover", "address", "examine"]),
    (r"\bprovided\b", ["given", "supplied", "included"]),
    (r"\bdetails\b", ["specifics", "particulars", "information"]),
    (r"\bresults\b", ["findings", "numbers", "outcomes"]),
    (r"\bpaper\b", ["manuscript", "submission", "work"]),
    (r"\bexperiments\b", ["evaluations", "runs", "studies"]),
    (r"\bapproved\b", ["cleared", "authorised", "signed off"]),
    (r"\breleased\b", ["published", "made public", "shared"]),
    (r"\bwill be\b", ["is going to be", "is to be", "shall be"]),
    (r"\bupon acceptance\b", ["after the decision", "once accepted", "at publication time"]),
    (r"\bavailable\b", ["accessible", "obtainable", "on hand"]),
    (r"\bstandard deviation\b", ["spread", "std. dev.", "dispersion"]),
    (r"\bGPUs?\b", ["accelerators", "graphics cards", "GPU devices"]),
]
_OPENERS = ["", "", "In short, ", "As stated, ", "Indeed, ", "To be clear, ", "Briefly: "]


def _pick(options: list[str], rng: random.Random) -> Callable[[re.Match[str]], str]:
    return lambda _m: rng.choice(options)


def reword(text: str, rng: random.Random) -> str:
    """``text`` with synonyms swapped, its sentences possibly reordered, and an opener added."""
    for pattern, options in _SYNONYMS:
        if rng.random() < 0.7:
            text = re.sub(pattern, _pick(options, rng), text, flags=re.I)
    sentences = [s for s in re.split(r"(?<=[.;])\s+", text.strip()) if s]
    if len(sentences) > 1 and rng.random() < 0.5:
        rng.shuffle(sentences)
    out = " ".join(sentences)
    opener = rng.choice(_OPENERS)
    return (opener + out[:1].lower() + out[1:]) if opener and out[:2] != out[:2].upper() else opener + out
