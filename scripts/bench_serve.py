#!/usr/bin/env python
"""Upload-to-report time of ``checklist-eval serve`` on the challenge's PDFs, with the CLI's ``check``
on the same PDFs, in the same run, as the baseline.

For each PDF of ../shared/corpus/anchor-sample/papers (22): POST /api/check with the file, then poll
GET /api/check/ID every 20 ms until the report is there (the time a person waits between the upload
and the report: receiving the file, parsing in the isolated worker, judging, rendering), one upload at
a time; and ``checklist-eval check PDF --json`` as a process (what an author runs instead: its time
includes starting Python and the parser worker). Offline assessor. Prints one row per PDF, then the
median, mean and max of each; ``--json`` prints the figures as one object.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT.parent / "shared" / "corpus" / "anchor-sample" / "papers"
POLL_S = 0.02


def multipart(path: Path) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{path.name}\"\r\n"
            "Content-Type: application/pdf\r\n\r\n").encode()
    return head + path.read_bytes() + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def upload_to_report(base: str, path: Path) -> tuple[float, str]:
    """Seconds from sending the upload to having the report; and the check's status."""
    body, ctype = multipart(path)
    t0 = time.perf_counter()
    req = urllib.request.Request(base + "/api/check", data=body, headers={"Content-Type": ctype}, method="POST")
    with urllib.request.urlopen(req, timeout=300) as resp:
        url = base + json.load(resp)["url"]
    while True:
        try:
            with urllib.request.urlopen(url, timeout=300) as resp:
                if resp.status == 200:
                    resp.read()
                    return time.perf_counter() - t0, "done"
        except urllib.error.HTTPError as err:
            if err.code != 202:
                return time.perf_counter() - t0, f"failed ({err.code})"
        time.sleep(POLL_S)


def cli_check(path: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "checklist_eval", "check", str(path), "--json"], capture_output=True,
                   check=False, timeout=600)
    return time.perf_counter() - t0


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "checklist_eval", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    match = re.search(r"http://[\d.]+:\d+", line)
    if match is None:
        proc.kill()
        raise SystemExit(f"serve did not start: {line!r}")
    return proc, match.group(0)


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "mean": statistics.fmean(values), "max": max(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--limit", type=int, default=0, help="only the first N PDFs")
    args = parser.parse_args()
    pdfs = sorted(PAPERS.glob("*/*.pdf"))[: args.limit or None]
    if not pdfs:
        raise SystemExit(f"no PDFs under {PAPERS}")
    proc, base = start_server()
    rows = []
    try:
        upload_to_report(base, pdfs[0])  # warm: the parser pool's first worker and the imports
        for pdf in pdfs:
            served, status = upload_to_report(base, pdf)
            rows.append({"paper": pdf.name, "kb": pdf.stat().st_size // 1024, "serve_s": served, "status": status,
                         "cli_s": cli_check(pdf)})
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    result = {"papers": len(rows), "serve": summary([r["serve_s"] for r in rows]),
              "cli_check": summary([r["cli_s"] for r in rows]), "rows": rows}
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{'paper':58} {'KB':>6} {'serve s':>8} {'check s':>8}  status")
    for r in rows:
        print(f"{r['paper'][:58]:58} {r['kb']:6d} {r['serve_s']:8.2f} {r['cli_s']:8.2f}  {r['status']}")
    print()
    print(f"{'':58} {'':6} {'serve':>8} {'check':>8}")
    for key in ("median", "mean", "max"):
        print(f"{key:58} {'':6} {result['serve'][key]:8.2f} {result['cli_check'][key]:8.2f}")
    print(f"\n{len(rows)} PDFs, one at a time, offline assessor; serve: upload to report through the API "
          f"(polled every {POLL_S * 1000:.0f} ms); check: the CLI as a process (baseline).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
