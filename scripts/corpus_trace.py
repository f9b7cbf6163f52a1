"""Record and replay other people's PyKokkos programs (corpus/pykokkos.toml).

Each program is taken from a fetched copy of its repository at the pinned
commit into a scratch folder outside this tree (never committed), run twice
with a data trace (PK_TRACE_DATA=1), eagerly and under PK_FUSE=1, and each
trace is replayed `--both`: the replay's final buffers must equal the
recording's, unfused and fused.

    python scripts/corpus_trace.py --mirrors /work/.mirror --work /tmp/pk-corpus [--only SUBSTR] [--json out.json]

`--mirrors` holds one bare clone per repository, named `owner+name` (the
`fetch` tool's layout, `owner+name/repo` also works). Prints one line per
program and run, then the counts.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def git_dir(mirrors: pathlib.Path, repo: str) -> pathlib.Path | None:
    base = mirrors / repo.replace("/", "+")
    for d in (base / "repo", base):
        if (d / "HEAD").exists() or (d / ".git").exists():
            return d
    return None


def extract(gd: pathlib.Path, commit: str, paths: list[str], dest: pathlib.Path) -> None:
    for p in paths:
        out = dest / p
        out.parent.mkdir(parents=True, exist_ok=True)
        blob = subprocess.run(["git", f"--git-dir={gd}", "show", f"{commit}:{p}"], capture_output=True, check=True)
        out.write_bytes(blob.stdout)


def missing_needs(prog: dict) -> list[str]:
    return [n for n in prog.get("needs", []) if importlib.util.find_spec(n) is None]


def replay(trace: pathlib.Path, cwd: pathlib.Path, timeout: int, env: dict) -> tuple[str, str]:
    """(verdict, detail) of `replay --both` on one trace."""
    try:
        r = subprocess.run(
            [sys.executable, "-m", "pykokkos", "replay", str(trace), "--both"],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
            env=dict(os.environ, **env),
        )
    except subprocess.TimeoutExpired:
        return "replay-timeout", ""
    finals = re.findall(r"final buffers: (.*)", r.stdout)
    if r.returncode == 0 and len(finals) == 2 and all(f.startswith("equal") for f in finals):
        # A program whose launches touch no buffer (prints only) checks nothing.
        return ("equal" if "(0 of" not in finals[-1] else "no-buffers"), finals[-1]
    tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
    return ("differ" if any("DIFFER" in f for f in finals) else "replay-error"), tail[0][:200]


def run_one(prog: dict, gd: pathlib.Path, work: pathlib.Path, timeout: int) -> list[dict]:
    tag = f"{prog['repo'].replace('/', '+')}@{prog['commit'][:8]}"
    src = work / tag
    extract(gd, prog["commit"], [prog["path"], *prog.get("with", [])], src)
    script = src / prog["path"]
    cwd = src / prog["cwd"] if "cwd" in prog else script.parent
    out = []
    for fuse in ("0", "1"):
        name = re.sub(r"[^A-Za-z0-9]+", "_", prog["path"] + "_" + "_".join(prog.get("args", [])))
        trace = work / "traces" / tag / f"{name}.fuse{fuse}.jsonl"
        trace.parent.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, **prog.get("env", {}), PK_TRACE=str(trace), PK_TRACE_DATA="1", PK_FUSE=fuse)
        row = {"repo": prog["repo"], "path": prog["path"], "args": prog.get("args", []), "fuse": fuse}
        t0 = time.perf_counter()
        try:
            r = subprocess.run(
                [sys.executable, str(script), *prog.get("args", [])], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            out.append(dict(row, verdict="run-timeout", detail=f"over {timeout} s"))
            continue
        row["run_s"] = round(time.perf_counter() - t0, 1)
        launches = sum(1 for line in open(trace) if '"ev":"launch"' in line) if trace.exists() else 0
        row["launches"] = launches
        if r.returncode != 0:
            tail = (r.stderr.strip().splitlines() or [""])[-1]
            out.append(dict(row, verdict="run-failed", detail=tail[:200]))
            continue
        if launches == 0:
            out.append(dict(row, verdict="no-launches", detail=""))
            continue
        verdict, detail = replay(trace, cwd, timeout, prog.get("env", {}))
        out.append(dict(row, verdict=verdict, detail=detail))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest", default=str(ROOT / "corpus" / "pykokkos.toml"))
    ap.add_argument("--mirrors", required=True, help="folder of bare clones named owner+name")
    ap.add_argument("--work", required=True, help="scratch folder outside the tree")
    ap.add_argument("--only", help="programs whose repo/path contains this")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json", help="write every row here")
    a = ap.parse_args()
    work = pathlib.Path(a.work).resolve()
    if ROOT in work.parents or work == ROOT:
        sys.exit("--work must be outside the project: other people's programs are never in its tree")
    progs = tomllib.loads(pathlib.Path(a.manifest).read_text())["program"]
    rows = []
    for p in progs:
        if a.only and a.only not in f"{p['repo']}/{p['path']}":
            continue
        base = {"repo": p["repo"], "path": p["path"], "args": p.get("args", [])}
        gd = git_dir(pathlib.Path(a.mirrors), p["repo"])
        if p.get("mpi"):
            rows.append(dict(base, verdict="skipped", detail="an MPI program (run under mpiexec by hand)"))
        elif missing_needs(p):
            rows.append(dict(base, verdict="skipped", detail=f"needs {', '.join(missing_needs(p))}"))
        elif gd is None:
            rows.append(dict(base, verdict="skipped", detail="repository not fetched"))
        else:
            rows += run_one(p, gd, work, a.timeout)
            for r in rows[-2:]:
                print(
                    f"{r['verdict']:>13s}  fuse={r.get('fuse', '-')}  {r['repo']}/{r['path']} {' '.join(r['args'])}  {r.get('detail', '')}",
                    flush=True,
                )
            continue
        print(f"{rows[-1]['verdict']:>13s}  {p['repo']}/{p['path']}  {rows[-1]['detail']}", flush=True)
    counts: dict = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print("counts (a program counts once per mode it ran in):", json.dumps(counts, sort_keys=True))
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(rows, indent=1))
    return 1 if counts.get("differ") or counts.get("replay-error") else 0


if __name__ == "__main__":
    sys.exit(main())
