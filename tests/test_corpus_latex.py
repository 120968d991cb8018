"""The parser on 31 real checklists from public repositories (../shared/corpus/latex).

Expected answers were read off each file by hand (live \\answer macros after the instruction block,
guideline bullets ignored) and cross-checked against the "Answer:" lines; see MANIFEST.tsv for what
makes each file unusual. Answers are listed in template order: Y=Yes N=No A=NA T=TODO -=missing.
"""

from __future__ import annotations

import pytest

from checklist_eval.errors import NoChecklistError
from checklist_eval.reading.parsing import load_paper

EXPECTED = {
    "1587causalai__dynamic-beta-alignment__neurips_2024.tex": ("neurips-2024", "YYAYYYYYYYAAAAA"),
    "AIQ-Kitware__neurips-2025-MAGNET__paper-checklist.tex": ("neurips-2025", "YYAAYAAAYYAYYAAY"),
    "GiggleLiu__ProblemReductionPaper__checklist.tex": ("neurips-2026", "YYAYYYAYYYAYYAAY"),
    "HSG-AIML-Papers__2022_NeurIPS_Schuerholt_Hyper-Representation-Sampling__checklist.tex": ("neurips-2021", "YYNYAAYYYYYYYAAAAA"),
    "HSG-AIML-Papers__2022_Schuerholt_NeurIPS_Model-Zoos-Datset__99_checklist.tex": ("neurips-2021", "YYNYAAYYYYYNYAAAAA"),
    "MatanAvitan__acc_int_paper__checklist.tex": ("neurips-2026", "YYANNNNNYNANAAAA"),
    "PatrickAllenCooper__ACE__paper_neurips_ace_2026_checklist.tex": ("neurips-2026", "YYYYYYYYYYAYYAAY"),
    "SusimRoy__Coreview__neurips_2024.tex": ("neurips-2024", "YYAYNYNYYAAYAAA"),
    # The file alone has no 2026-only wording (question lines removed); 2025 and 2026 share ids.
    "TousenKaname__NeuroVeil_paper__checklist.tex": ("neurips-2025", "YYAYYYAYYYYYYAAA"),
    "UTAustin-SwarmLab__example_paper_Neurips_2021__sections_checklist.tex": ("neurips-2021", "YYYYYYYYYYYYYYYAAA"),
    "ahmetfsaz__LogiCity__neurips_2024.tex": ("neurips-2021", "YYYYAAYYYYAAYAAYYY"),
    "ankurankan__2024-human-sl__paper_checklist.tex": ("neurips-2024", "TTTTTTTTTTTTTTT"),
    "evaldataset__tsfm-peft-bench__neurips_checklist.tex": ("neurips-2026", "YYAYYYYYYYAYYAAA"),
    "f-dangel__kfac-pinns-experiments__paper_sections_checklist.tex": ("neurips-2024", "YYAYYYYYYNAAAAA"),
    "f-dangel__torch-jet__paper_sections_checklist.tex": ("neurips-2025", "YYAYYYYYYAAYYAAA"),
    # 15 reordered items of groups 1-4; group 5 was deleted by the authors
    "jdlafferty__alignment__checklist.tex": ("neurips-2021", "YYYYYYYYYYYYYAA---"),
    "k-mundinger__ramsey-fw-neurips__checklist.tex": ("neurips-2026", "YYAYYYYYYAAYNNAA"),
    "lamalab-org__data-invariance__paper_checklist.tex": ("neurips-2026", "YYAYYYYYYYAYAAAA"),
    "mdeff__paper-cryoem-orientation-recovery__sections_7_checklist.tex": ("neurips-2021", "YYYYAAYYYYYYYAAAAA"),
    "menhguin__calibration_paper__neurips_paper.tex": ("neurips-2025", "YYAYYYYYYYAYYAAY"),
    "mmwave-human__PRISM__assets_checklist.tex": ("neurips-2026", "YYAYYYNYYYAYYYYA"),
    "reykoki__SmokeViz_paper__neurips_2025.tex": ("neurips-2025", "YYAYYYNYYYAYYAAA"),
    "sjchen0__vlp-latex-overleaf__checklist.tex": ("neurips-2026", "YYYYNYYYYAAYAAAA"),
    "someshsingh22__llamiaTex__neurips_2025.tex": ("neurips-2025", "YYYYYYYYYAAYYAAY"),
    "sun-messi__Overleaf__neurips_2025.tex": ("neurips-2025", "YYYYYYYYYAAYAAAA"),
    "t46__paper-pre-training-different-modality-offline-rl__main.tex": ("neurips-2021", "YYYYAAYYYYYYAYAAAA"),
    "zhihanyang2022__CGLM-v1-arxiv-release-__checklist.tex": ("neurips-2026", "YYYYNYNYYYAYYAAA"),
    "templates/neurips_2021_official_checklist__UTAustin-SwarmLab__Paper_Writing_Guide__checklist_neurips_2021.tex": ("neurips-2021", "T" * 18),
    "templates/neurips_2024_official_checklist__felixludos__neurips24-CALM-Workshop-Proposal__backup.tex": ("neurips-2024", "T" * 15),
    "templates/neurips_2025_official_checklist__nostory19__neurips2025_latex__neurips_2025.tex": ("neurips-2025", "T" * 16),
    "templates/neurips_2026_official_checklist__MatanAvitan__acc_int_paper__checklist.tex": ("neurips-2026", "T" * 16),
}
# No live checklist: fully commented out, inside \iffalse, free-form prose without answer marks, a
# preamble excerpt whose \input{checklist} target is absent, and a lab checklist that is not NeurIPS.
NO_CHECKLIST = [
    "mdeff__paper-cheblienet__neurips_2021.tex",
    "meredithEM__aca2023__neurips_2022.tex",
    "SzJS__LASR_2_Paper__appendix.tex",
    "Gunale0926__projection_learning__checklist.tex",
    "mmwave-human__PRISM__assets_PRISM_neurips26_preamble_excerpt.tex",
    "UTAustin-SwarmLab__Paper_Writing_Guide__sections_checklist.tex",
]
CODE = {"Yes": "Y", "No": "N", "NA": "A", "TODO": "T", None: "-"}


@pytest.fixture(scope="module")
def corpus(shared_dir):
    return shared_dir / "corpus" / "latex"


def test_every_corpus_file_is_covered(corpus):
    files = {p.relative_to(corpus).as_posix() for p in corpus.rglob("*.tex")}
    assert files == set(EXPECTED) | set(NO_CHECKLIST)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_answers(corpus, name):
    version, answers = EXPECTED[name]
    paper = load_paper(corpus / name)
    assert paper.checklist.id == version
    got = "".join(CODE[it.answer.value if it.answer else None] for it in paper.checklist.items)
    assert got == answers


@pytest.mark.parametrize("name", NO_CHECKLIST)
def test_no_live_checklist(corpus, name):
    with pytest.raises(NoChecklistError, match=name[:20]):
        load_paper(corpus / name)


def test_justification_details(corpus):
    def item(name, qid):
        return load_paper(corpus / name).checklist.item(qid)

    # \answerYes{}, text outside the braces; custom \sref without a definition in the excerpt
    assert item("ahmetfsaz__LogiCity__neurips_2024.tex", "1b").justification == (
        "the limitations are discussed in Section [sec:limitation].")
    # \answerYes{\href{..}{..}}: nested braces, URL kept readable
    assert item("t46__paper-pre-training-different-modality-offline-rl__main.tex", "3a").justification == (
        "https://github.com/t46/pre-training-different-modality-offline-rl")
    # commented-out alternative answer next to the live one
    cryo = item("mdeff__paper-cryoem-orientation-recovery__sections_7_checklist.tex", "3c")
    assert cryo.answer.value == "Yes" and cryo.justification.startswith("When there was variance")
    # justification as a {...} group on the next lines
    jet = item("f-dangel__torch-jet__paper_sections_checklist.tex", "2")
    assert jet.justification.startswith("We specifically incorporate a paragraph about limitations")
    # one justification lost its "Justification:" label
    assert item("someshsingh22__llamiaTex__neurips_2025.tex", "1").justification
    # TODO template: no justification
    assert item("ankurankan__2024-human-sl__paper_checklist.tex", "1").justification is None
    # 2026 \answerNA{} inside guidelines is not an answer: question 3's own answer is NA, question 13 No
    ramsey = load_paper(corpus / "k-mundinger__ramsey-fw-neurips__checklist.tex").checklist
    assert ramsey.item("13").answer.value == "No" and ramsey.item("13").justification
