"""Assessment records: CSV/JSONL round trips keep NA, bad rows are named, rescore needs no model."""

from __future__ import annotations

import json

import pytest

from checklist_eval.cli import main
from checklist_eval.errors import InputError
from checklist_eval.models import Answer
from checklist_eval.challenge.records import Record, records_to_csv_text
from checklist_eval.challenge.results.ledger import read_records, write_records
from checklist_eval.challenge.results.appeals import apply_overrides


def sample():
    def r(role, q, ans, ok, **kw):
        return Record(submission_id="sub1", role=role, question_id=q, answer=ans, correct=ok, case="GAT", **kw)

    return [
        r("G", "1", Answer.YES, True, review='says "yes", ok', p_correct=0.91, calls=2, prompt_tokens=5000,
          completion_tokens=120, cached_tokens=4096, cost_usd=0.000123),
        r("G", "2", Answer.NA, True, justification="line1\nline2, with comma", cached=True),
        r("A", "1", Answer.NA, True),
        r("A", "2", None, False),
        r("T", "1", Answer.NO, True),
        r("T", "2", Answer.TODO, False),
    ]


@pytest.mark.parametrize("ext", ["csv", "jsonl"])
def test_round_trip_keeps_na_and_missing(tmp_path, ext):
    recs = sample()
    write_records(recs, tmp_path / "r.csv", tmp_path / "r.jsonl")
    back = read_records(tmp_path / f"r.{ext}")
    assert back == recs
    assert back[1].answer is Answer.NA and back[3].answer is None
    assert back[0].cost_usd == 0.000123 and back[0].calls == 2 and back[1].cached


def test_records_written_before_the_ledger_columns_still_read(tmp_path):
    old = tmp_path / "old.csv"
    old.write_text("submission_id,role,question_id,answer,correct\nsub1,G,1,NA,1\n")
    (rec,) = read_records(old)
    assert rec.answer is Answer.NA and rec.calls == 0 and rec.cost_usd == 0.0 and not rec.cached
    bad = tmp_path / "bad.csv"
    bad.write_text("submission_id,role,question_id,answer,correct,calls\nsub1,G,1,NA,1,-3\n")
    with pytest.raises(InputError, match="calls must not be negative"):
        read_records(bad)


def test_csv_holds_literal_na(tmp_path):
    text = records_to_csv_text(sample())
    assert "\nsub1,G,2,NA,1," in text
    assert "\nsub1,A,2,,0," in text


def test_bad_rows_are_named(tmp_path):
    p = tmp_path / "bad.csv"
    p.write_text("submission_id,role,question_id,answer,correct\ns,G,1,Yes,1\ns,G,2,Maybe,1\n")
    with pytest.raises(InputError, match=r"bad.csv: row 3: answer must be"):
        read_records(p)
    p.write_text("submission_id,role,question_id,answer,correct\ns,X,1,Yes,1\n")
    with pytest.raises(InputError, match="role must be"):
        read_records(p)
    p.write_text("submission_id,role,question_id,answer\ns,G,1,Yes\n")
    with pytest.raises(InputError, match="missing column"):
        read_records(p)
    p.write_text("submission_id,role,question_id,answer,correct\ns,G,1,Yes,1\ns,G,1,No,0\n")
    with pytest.raises(InputError, match="duplicate"):
        read_records(p)


def test_overrides(tmp_path):
    ov = tmp_path / "ov.csv"
    ov.write_text("submission_id,role,question_id,correct,note\nsub1,A,1,0,appeal 7\n")
    out, n = apply_overrides(sample(), ov)
    assert n == 1 and out[2].correct is False and sample()[2].correct is True
    ov.write_text("submission_id,role,question_id,correct\nsub1,T,2,1\n")
    with pytest.raises(InputError, match="TODO or missing"):
        apply_overrides(sample(), ov)
    ov.write_text("submission_id,role,question_id,correct\nnope,T,2,1\n")
    with pytest.raises(InputError, match="no record"):
        apply_overrides(sample(), ov)


def test_rescore_cli_json_and_overrides(tmp_path, capsys):
    write_records(sample(), tmp_path / "r.csv", tmp_path / "r.jsonl")
    assert main(["rescore", str(tmp_path / "r.csv"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # G: 2/2. A: 1/2. T: 1/2. Both questions count: q1 a=NA t=No g=0, c_A=1 disagree; q2 a=missing
    # t=TODO g=0, c_A=0 agree -> R = 1/2, S = 1 * 1/2 * 1/2 * 1/2.
    assert out == {
        "submissions": [
            {"submission_id": "sub1", "case": "GAT", "C_G": 1.0, "C_A": 0.5, "C_T": 0.5, "R": 0.5, "S": 0.125}
        ]
    }
    ov = tmp_path / "ov.csv"
    ov.write_text("submission_id,role,question_id,correct\nsub1,A,1,0\n")
    assert main(["rescore", str(tmp_path / "r.jsonl"), "--overrides", str(ov), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["submissions"][0]
    assert (out["C_A"], out["R"], out["S"]) == (0.0, 1.0, 0.0)


def test_rescore_cli_bad_input_exit_2(tmp_path, capsys):
    p = tmp_path / "r.csv"
    p.write_text("submission_id,role,question_id,answer,correct\ns,T,1,Yes,1\n")
    assert main(["rescore", str(p)]) == 2
    err = capsys.readouterr().err
    assert "r.csv" in err and "no G" in err and "Traceback" not in err
    assert main(["rescore", str(tmp_path / "absent.csv")]) == 2


def test_every_csv_reader_names_the_file_for_unreadable_input(tmp_path):
    from checklist_eval.challenge.records import read_challenge_checklist_csv

    ragged = tmp_path / "ragged.csv"
    ragged.write_text('a,b\n1,2\n"unterminated,3\n4,5,6,7\n')
    latin = tmp_path / "latin.csv"
    latin.write_bytes("submission_id,role,question_id,answer,correct\ns\xe9,G,1,Yes,1\n".encode("latin-1"))
    for bad in (ragged, latin):
        with pytest.raises(InputError, match=f"{bad.name}: not a readable CSV"):
            read_records(bad)
        with pytest.raises(InputError, match=f"{bad.name}: not a readable CSV"):
            apply_overrides(sample(), bad)
        with pytest.raises(InputError, match=f"{bad.name}: not a readable CSV"):
            read_challenge_checklist_csv(bad, submission_id="s", role="G", case="G")
    bad_jsonl = tmp_path / "latin.jsonl"
    bad_jsonl.write_bytes(b'{"a": "\xe9"}\n')
    with pytest.raises(InputError, match="not UTF-8"):
        read_records(bad_jsonl)
    with pytest.raises(InputError, match="missing column"):
        read_challenge_checklist_csv(_write(tmp_path / "c.csv", "Answer\nYes\n"), submission_id="s", role="G", case="G")


def _write(path, text):
    path.write_text(text)
    return path
