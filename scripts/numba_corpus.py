"""Other people's Numba programs under pykokkos.numba, against the real Numba.

    python scripts/numba_corpus.py --mirrors /work/.mirror [--only NAME] [--json out.json]

corpus/numba.toml names each program (repository, commit, path, the functions
it jits, the entry to call and an expression for seeded inputs). The files are
read from fetched repositories (`<mirrors>/<owner>+<name>/repo`, a git
directory) at the manifest's commit, extracted outside the tree, and run as
written: `import numba` resolves to the real Numba for the reference and to
pykokkos.numba for the runs checked against it, each in a child process:

  eager   the program as a Numba user runs it (fallbacks allowed), results equal
  fused   the same under lazy fusion (PK_FUSE=1)
  strict  PK_NUMBA_STRICT=1: equal when fully offloaded, else the located error

A program "runs unchanged" when eager and fused are equal (values and dtypes),
and is "fully offloaded" when every jitted function it called ran as Kokkos
kernels and strict mode is equal too.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
MANIFEST = pathlib.Path(os.environ.get("PK_NUMBA_CORPUS_MANIFEST", ROOT / "corpus" / "numba.toml"))


def extract(mirrors: pathlib.Path, work: pathlib.Path, repo: str, commit: str, folders: list[str]) -> pathlib.Path:
    """The repository's folders at `commit`, extracted once under `work` (the
    program's own folder and what it reads beside it; a mirror may lack blobs
    of large files elsewhere)."""
    dest = work / f"{repo.replace('/', '+')}@{commit[:12]}"
    git = mirrors / repo.replace("/", "+") / "repo"
    if not git.exists():
        raise SystemExit(f"{repo}: not fetched (expected a git directory at {git})")
    for folder in folders:
        mark = dest / ".extracted" / folder.replace("/", "+")
        if mark.exists():
            continue
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", f"--git-dir={git}", "archive", commit, folder], capture_output=True, check=False)
        if archive.returncode != 0:
            raise SystemExit(f"{repo}@{commit}:{folder}: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        mark.parent.mkdir(exist_ok=True)
        mark.write_text("")
    return dest


def folders_of(p: dict) -> list[str]:
    parent = str(pathlib.PurePosixPath(p["path"]).parent)
    out = [parent if parent != "." else p["path"]]
    if "npbench(" in p["args"]:
        out.append("bench_info")
    return out


def run_child(entry: dict, tree: pathlib.Path, timeout: float) -> dict:
    env = dict(os.environ)
    env.pop("PK_NUMBA_STRICT", None)
    env.pop("PK_FUSE", None)
    # Numba's own cache (cache=True programs) private to this run: entries of
    # another run name modules this one does not have.
    env["NUMBA_CACHE_DIR"] = str(pathlib.Path(tempfile.mkdtemp(prefix="pk-numba-cache-")))
    cmd = [sys.executable, str(ROOT / "scripts" / "numba_corpus_child.py"), json.dumps(entry), str(tree)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"name": entry["name"], "status": "timeout", "detail": f"over {timeout:.0f} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return {"name": entry["name"], "status": "crash", "detail": f"exit {done.returncode}: " + " | ".join(tail)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", required=True, type=pathlib.Path)
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/pk-numba-corpus"))
    ap.add_argument("--only", action="append", default=[], help="programs whose name contains this")
    ap.add_argument("--json", type=pathlib.Path)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    programs = tomllib.loads(MANIFEST.read_text())["program"]
    if a.only:
        programs = [p for p in programs if any(o in p["name"] for o in a.only)]
    results = []
    for p in programs:
        tree = extract(a.mirrors, a.work, p["repo"], p["commit"], folders_of(p))
        r = run_child(p, tree, a.timeout)
        r["source"] = p["name"].split("/")[0]
        results.append(r)
        print(f"{r['status']:10s} {p['name']}" + (f"  -- {r['detail']}" if r.get("detail") else ""), flush=True)
    summarize(results)
    if a.json:
        a.json.write_text(json.dumps(results, indent=1) + "\n")
    return 0 if all(r["status"] in ("offloaded", "fallback") for r in results) else 1


def summarize(results: list) -> None:
    n = len(results)
    unchanged = sum(r["status"] in ("offloaded", "fallback") for r in results)
    offloaded = sum(r["status"] == "offloaded" for r in results)
    print(
        f"\n{n} programs from {len({r['source'] for r in results})} sources: {unchanged} run unchanged and equal "
        f"to Numba (eager and fused); {offloaded} fully offloaded ({100 * offloaded / max(n, 1):.0f}%)"
    )
    by_status = collections.Counter(r["status"] for r in results)
    print("  " + ", ".join(f"{k} {v}" for k, v in sorted(by_status.items())))
    for src in sorted({r["source"] for r in results}):
        mine = [r for r in results if r["source"] == src]
        print(
            f"  {src:20s} {len(mine):3d} programs, {sum(r['status'] == 'offloaded' for r in mine):3d} offloaded, "
            f"{sum(r['status'] in ('offloaded', 'fallback') for r in mine):3d} unchanged"
        )
    reasons = collections.Counter(r.get("reason", "") for r in results if r["status"] == "fallback")
    if reasons:
        print("why not offloaded (first reason per program):")
        for why, k in reasons.most_common():
            print(f"  {k:3d}  {why}")


if __name__ == "__main__":
    raise SystemExit(main())
