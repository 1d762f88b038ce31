#!/usr/bin/env python3
"""Differential test of phasegate against the upstream projects' own validators.

Collects every artifact the upstream repositories' histories and docs contain, runs upstream's own
validators on each (from the given checkouts, offline; nothing of theirs is copied into phasegate),
runs phasegate on the same files, and prints the agreement table.

    python3 bench/upstream/compare.py --phasegate ./phasegate \
        --jg path/to/multi-agents --scc path/to/scc2 \
        --pace-starter path/to/pace-framework-starter --pace-docs path/to/pace-docs \
        --autopilot path/to/autopilot-cc [--work DIR] [--details]

Each checkout is a git working tree (its HEAD provides the validators; its whole history, all refs,
provides the artifacts). Any of them may be left out. Needs Python 3.10+, PyYAML and jsonschema
(the PACE validators use it, as upstream does).

Upstream verdict per file: "reject" when any upstream validator that covers the file reports an
error or crashes on it, "accept" when every one that covers it passes it, "n/a" when none covers it
(no validator upstream: Autopilot, JG state.yaml/lessons.yaml/pipeline-trace.json, PACE cycle/
attempts/plan). phasegate verdict: "error" when phasegate reports an error finding on the file,
else "pass" (warnings are counted apart). A false HOLD is "accept" + "error"; a miss is
"reject" + "pass".
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

# ---------------------------------------------------------------------------------------------
# git helpers


def git(repo: Path, *args: str, binary: bool = False):
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)
    return out.stdout if binary else out.stdout.decode()


def history_blobs(repo: Path, keep) -> dict[tuple[str, str], tuple[str, str]]:
    """(path, blob) -> (first commit seen, path) for every blob of a kept path in any commit."""
    seen: dict[tuple[str, str], tuple[str, str]] = {}
    for commit in git(repo, "rev-list", "--all", "--reverse").split():
        for line in git(repo, "ls-tree", "-r", commit).splitlines():
            meta, path = line.split("\t", 1)
            _, typ, blob = meta.split()
            if typ == "blob" and keep(path) and (path, blob) not in seen:
                seen[(path, blob)] = (commit, path)
    return seen


UNREADABLE: list[str] = []


def blob(repo: Path, sha: str) -> bytes | None:
    """The blob's content, or None when the clone lacks it (a partial or shallow copy)."""
    try:
        return git(repo, "cat-file", "blob", sha, binary=True)
    except subprocess.CalledProcessError:
        UNREADABLE.append(f"{repo.name}:{sha}")
        return None


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[int, str]:
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return p.returncode, (p.stdout + p.stderr).strip()


# ---------------------------------------------------------------------------------------------
# records


class Record:
    def __init__(self, family: str, rel: str, source: str):
        self.family = family
        self.rel = rel  # path under the work tree, as phasegate sees it
        self.source = source  # repo:path@commit
        self.upstream: list[tuple[str, str, str]] = []  # (validator, verdict accept|reject, detail)

    def up(self) -> str:
        if not self.upstream:
            return "n/a"
        return "reject" if any(v == "reject" for _, v, _ in self.upstream) else "accept"


# ---------------------------------------------------------------------------------------------
# JG (JahnelGroup/multi-agents): walkthroughs, tutorial solutions, templates, any .pipeline/


JG_NAMES = ["plan.json", "worker-result.json", "worker-result-fast.json", "worker-result-high.json",
            "test-result.json", "test-result-pass.json", "test-result-fail.json", "review-result.json",
            "debug-diagnosis.json", "git-result.json", "state.yaml", "lessons.yaml", "pipeline-trace.json"]


def jg_name(base: str) -> str | None:
    base = re.sub(r"\.example$", "", base)
    base = re.sub(r"^\d+-", "", base)  # tutorial solutions: 02-plan.json
    base = {"worker-result-fast-escalate.json": "worker-result-fast.json",
            "worker-result-standard.json": "worker-result.json"}.get(base, base)
    return base if base in JG_NAMES else None


def collect_jg(repo: Path, work: Path) -> tuple[list[Record], list[Path]]:
    def keep(p: str) -> bool:
        return bool(re.match(r"(docs/[^/]+/(walkthrough|tutorials/solutions)/|\.cursor-[^/]+/templates/|(.*/)?\.pipeline/)", p)) \
            and jg_name(os.path.basename(p)) is not None
    blobs = history_blobs(repo, keep)
    # A unit is a source directory's files at one version; identical units are kept once.
    units: dict[str, dict[str, tuple[str, str, str]]] = collections.defaultdict(dict)
    for (path, sha), (commit, _) in blobs.items():
        d, base = os.path.split(path)
        name = jg_name(base)
        # worker-result-standard.json and -fast-escalate.json are two rounds: keep them apart.
        key = f"{d}#{base}" if base.startswith("worker-result-") and "solutions" in d else d
        units[key].setdefault(name, (sha, commit, path))
        if units[key][name][0] != sha:  # a later version of the file: a unit of its own
            units[f"{key}@{sha[:8]}"][name] = (sha, commit, path)
    recs, issue_dirs, seen = [], [], set()
    for key in sorted(units):
        files = units[key]
        digest = hashlib.sha1(json.dumps(sorted((n, s) for n, (s, _, _) in files.items())).encode()).hexdigest()[:10]
        if digest in seen:
            continue
        seen.add(digest)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", key.split("#")[0].split("@")[0]).strip("-")[-40:]
        issue = f"{slug}-{digest}"
        for name, (sha, commit, path) in sorted(files.items()):
            rel = f"jg/{issue}/.pipeline/lessons.yaml" if name == "lessons.yaml" else f"jg/.pipeline/{issue}/{name}"
            data = blob(repo, sha)
            if data is None:
                continue
            write(work / rel, data)
            recs.append(Record("jg", rel, f"JahnelGroup/multi-agents:{path}@{commit[:12]}"))
        issue_dirs.append(work / "jg/.pipeline" / issue)
    return recs, issue_dirs


def validate_jg(repo: Path, work: Path, recs: list[Record], issue_dirs: list[Path]) -> None:
    by_rel = {r.rel: r for r in recs}
    for r in recs:
        for bundle in ("practitioner", "expert"):
            script = repo / f".cursor-{bundle}/pipeline/schema.py"
            code, out = run([sys.executable, str(script), "--validate", str(work / r.rel)])
            if "Unknown artifact" in out:
                continue  # schema.py does not cover this file name
            r.upstream.append((f"{bundle} schema.py", "accept" if code == 0 else "reject", out.splitlines()[-1] if out else ""))
    stage_files = {"plan": ["plan.json"], "test": ["test-result.json"], "review": ["review-result.json"]}
    for d in issue_dirs:
        for bundle in ("practitioner", "expert"):
            script = repo / f".cursor-{bundle}/pipeline/check.py"
            for stage, names in stage_files.items():
                present = [n for n in names if (d / n).exists()]
                if not present:
                    continue
                code, out = run([sys.executable, str(script), "--issue", d.name, "--stage", stage, "--pipeline-dir", str(d.parent)])
                verdict = "accept" if code == 0 else "reject"
                detail = "crash: " + out.splitlines()[-1] if "Traceback" in out else out.splitlines()[-1] if out else ""
                for n in present:
                    rel = str((d / n).relative_to(work))
                    by_rel[rel].upstream.append((f"{bundle} check.py --stage {stage}", verdict, detail))


# ---------------------------------------------------------------------------------------------
# SCC (Micheleww/scc2): every submit/verdict JSON in the history


def collect_scc(repo: Path, work: Path) -> list[Record]:
    blobs = history_blobs(repo, lambda p: p.endswith(".json") and "schema" not in os.path.basename(p))
    recs, seen = [], set()
    for (path, sha), (commit, _) in sorted(blobs.items()):
        if sha in seen:
            continue
        data = blob(repo, sha)
        if data is None:
            continue
        try:
            obj = json.loads(data)
        except ValueError:
            obj = None
        sv = obj.get("schema_version", "") if isinstance(obj, dict) else ""
        # An SCC submit or verdict: by its schema_version, or (a broken or unversioned file) by the
        # name the gate writes it under.
        named = os.path.basename(path) in ("submit.json", "verdict.json") or re.search(r"/(submit|verdict)\.example\.json$", path)
        if not (sv in ("scc.submit.v1", "scc.verdict.v1") or (named and not sv)):
            continue
        seen.add(sha)
        kind = "submit" if "submit" in sv or "submit" in os.path.basename(path) else "verdict"
        task = obj.get("task_id") if isinstance(obj, dict) and isinstance(obj.get("task_id"), str) else "task"
        task = re.sub(r"[^A-Za-z0-9._-]+", "-", task)[:60] or "task"
        rel = f"scc/{sha[:10]}/artifacts/{task}/{kind}.json"
        write(work / rel, data)
        recs.append(Record("scc", rel, f"Micheleww/scc2:{path}@{commit[:12]}"))
    return recs


def load_upstream(path: Path):
    """Imports an upstream module from its file. scc2's contract_validator.py at HEAD (a15e3d51) uses
    typing.Any without importing it and cannot be imported at all; the name is then supplied (the
    file itself is left as it is) and a note printed."""
    import types
    import typing
    mod = types.ModuleType(path.stem)
    mod.__file__ = str(path)
    code = compile(path.read_text(), str(path), "exec")
    try:
        exec(code, mod.__dict__)
    except NameError as e:
        print(f"note: {path.name} does not import as it is ({e}); supplying typing.Any", file=sys.stderr)
        mod = types.ModuleType(path.stem)
        mod.__file__ = str(path)
        mod.__dict__["Any"] = typing.Any
        exec(code, mod.__dict__)
    # hygiene_validator.py at HEAD calls norm_rel but imports it only as _norm_rel.
    if "norm_rel(" in path.read_text() and "norm_rel" not in mod.__dict__ and "_norm_rel" in mod.__dict__:
        print(f"note: {path.name} calls norm_rel without importing it; supplying its own _norm_rel", file=sys.stderr)
        mod.__dict__["norm_rel"] = mod.__dict__["_norm_rel"]
    return mod


def validate_scc(repo: Path, work: Path, recs: list[Record]) -> None:
    import jsonschema
    sys.path.insert(0, str(repo))
    try:
        validate_submit_v1 = load_upstream(repo / "tools/scc/validators/contract_validator.py").validate_submit_v1
        validate_submit = load_upstream(repo / "tools/scc/validators/hygiene_validator.py").validate_submit
    finally:
        sys.path.pop(0)
    schemas = {k: json.loads((repo / f"contracts/{k}/{k}.schema.json").read_text()) for k in ("submit", "verdict")}
    for r in recs:
        kind = "submit" if r.rel.endswith("submit.json") else "verdict"
        try:
            obj = json.loads((work / r.rel).read_text())
        except ValueError as e:
            r.upstream.append(("json", "reject", str(e)))
            continue
        checks = [(f"contracts/{kind}/{kind}.schema.json", lambda o: [e.message for e in jsonschema.Draft7Validator(schemas[kind]).iter_errors(o)])]
        if kind == "submit":
            unit = work / r.rel.rsplit("/artifacts/", 1)[0]
            checks += [("contract_validator.validate_submit_v1", validate_submit_v1),
                       ("hygiene_validator.validate_submit", lambda o: validate_submit(o, unit))]
        for name, fn in checks:
            try:
                errs = fn(obj)
            except Exception as e:  # a crash is a rejection
                errs = [f"crash: {type(e).__name__}: {e}"]
            r.upstream.append((name, "reject" if errs else "accept", "; ".join(map(str, errs))[:160]))


# ---------------------------------------------------------------------------------------------
# PACE: the starter's plan.yaml versions; the docs' YAML examples, judged by the starter's schemas


PACE_SCHEMA_BY_NAME = {"story.md": ("STORY_CARD_SCHEMA", "PRIME"), "handoff.md": ("HANDOFF_SCHEMA", "FORGE"),
                       "gate.md": ("GATE_REPORT_SCHEMA", "GATE"), "sentinel.md": ("SENTINEL_REPORT_SCHEMA", "SENTINEL"),
                       "conduit.md": ("CONDUIT_REPORT_SCHEMA", "CONDUIT")}
PACE_DEFAULTS = {"gate.md": {"blockers": [], "deferred": [], "hold_reason": ""},
                 "sentinel.md": {"advisories": [], "blockers": [], "hold_reason": ""},
                 "conduit.md": {"advisories": [], "blockers": [], "hold_reason": ""}}


def pace_name(obj) -> str | None:
    if isinstance(obj, list):
        return "attempts.yaml" if obj and all(isinstance(e, dict) and "run" in e and "outcome" in e for e in obj) else None
    if not isinstance(obj, dict):
        return None
    if "gate_decision" in obj:
        return "gate.md"
    if "sentinel_decision" in obj:
        return "sentinel.md"
    if "conduit_decision" in obj:
        return "conduit.md"
    if "cycle_cost_usd" in obj:
        return "cycle.md"
    if obj.get("agent") == "FORGE" or "approach" in obj:
        return "handoff.md"
    if obj.get("agent") == "PRIME" or "acceptance" in obj or ("theme" in obj and "stories" in obj):
        return "story.md"
    return None


def collect_pace(starter: Path | None, docs: Path | None, work: Path) -> list[Record]:
    recs = []
    if starter:
        for (path, sha), (commit, _) in sorted(history_blobs(starter, lambda p: p in ("pace/plan.yaml", ".pace/plan.yaml") or p.startswith(".pace/day-")).items()):
            rel = f"pace/starter-{sha[:10]}/{path}"
            data = blob(starter, sha)
            if data is None:
                continue
            write(work / rel, data)
            recs.append(Record("pace", rel, f"pace-framework-org/pace-framework-starter:{path}@{commit[:12]}"))
    if docs:
        seen = set()
        for (path, sha), (commit, _) in sorted(history_blobs(docs, lambda p: p.startswith("src/content/docs/") and p.endswith((".md", ".mdx"))).items()):
            raw = blob(docs, sha)
            if raw is None:
                continue
            text = raw.decode("utf-8", "replace")
            for i, m in enumerate(re.finditer(r"```ya?ml[^\n]*\n(.*?)```", text, re.S)):
                body = m.group(1)
                try:
                    obj = yaml.safe_load(body)
                except yaml.YAMLError:
                    continue
                name = pace_name(obj)
                if not name or body in seen:
                    continue
                seen.add(body)
                day = obj.get("day") if isinstance(obj, dict) and isinstance(obj.get("day"), int) else 1
                slug = re.sub(r"[^A-Za-z0-9]+", "-", os.path.splitext(path.split("docs/", 2)[-1])[0]).strip("-")
                rel = f"pace/docs-{slug}-{hashlib.sha1(body.encode()).hexdigest()[:8]}/.pace/day-{day}/{name}"
                write(work / rel, body.encode())
                recs.append(Record("pace", rel, f"pace-framework-org/pace-docs:{path}@{commit[:12]} (block {i + 1})"))
    return recs


def validate_pace(starter: Path, work: Path, recs: list[Record]) -> None:
    import jsonschema
    spec = importlib.util.spec_from_file_location("pace_schemas", starter / "pace/schemas.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    for r in recs:
        name = os.path.basename(r.rel)
        if name not in PACE_SCHEMA_BY_NAME:
            continue  # cycle.md, attempts.yaml, plan.yaml: upstream never validates them
        schema_name, agent = PACE_SCHEMA_BY_NAME[name]
        obj = yaml.safe_load((work / r.rel).read_text())
        # What the orchestrator does before jsonschema.validate (gate.py, sentinel.py, conduit.py,
        # prime.py, forge.py): overwrite day and agent, fill defaults, coerce bullet strings.
        day = int(re.search(r"day-(\d+)", r.rel).group(1))
        if isinstance(obj, dict):
            obj["day"], obj["agent"] = day, agent
            for k, v in PACE_DEFAULTS.get(name, {}).items():
                obj.setdefault(k, v)
            if name == "handoff.md":
                for f in ("known_gaps", "edge_cases_tested"):
                    if isinstance(obj.get(f), str):
                        obj[f] = [ln.lstrip("- ").strip() for ln in obj[f].splitlines() if ln.strip() and ln.strip() != "-"]
            if name == "story.md" and obj.get("acceptance") is None and "acceptance" in obj:
                obj["acceptance"] = []
        try:
            jsonschema.validate(obj, getattr(mod, schema_name))
            r.upstream.append((f"pace/schemas.py {schema_name}", "accept", ""))
        except jsonschema.ValidationError as e:
            r.upstream.append((f"pace/schemas.py {schema_name}", "reject", e.message[:160]))
        except Exception as e:
            r.upstream.append((f"pace/schemas.py {schema_name}", "reject", f"crash: {e}"))


# ---------------------------------------------------------------------------------------------
# Autopilot (parthkukr/autopilot-cc): the committed .planning/phases/** and any .autopilot/ file


def collect_autopilot(repo: Path, work: Path) -> list[Record]:
    keep = lambda p: bool(re.match(r"(.*/)?\.planning/phases/[^/]+/(TRIAGE\.json|TRACE\.jsonl|[a-z_]+-trace\.jsonl)$", p)
                          or re.match(r"(.*/)?\.autopilot/(state\.json|config\.json|learnings\.md|archive/run-.*\.json|diagnostics/phase-.*-postmortem\.json)$", p))
    recs = []
    for (path, sha), (commit, _) in sorted(history_blobs(repo, keep).items()):
        rel = f"autopilot/{sha[:10]}/{path}"
        data = blob(repo, sha)
        if data is None:
            continue
        write(work / rel, data)
        recs.append(Record("autopilot", rel, f"parthkukr/autopilot-cc:{path}@{commit[:12]}"))
    return recs


# ---------------------------------------------------------------------------------------------


def phasegate(binary: Path, work: Path, families: list[str]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = collections.defaultdict(list)
    for fam in families:
        root = work / fam
        if not root.exists():
            continue
        p = subprocess.run([str(binary), "validate", "--format", "json", str(root)], capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"phasegate failed on {root}: {p.stderr}")
        for f in json.loads(p.stdout)["findings"]:
            if f["file"]:
                out[f"{fam}/{f['file']}"].append(f)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phasegate", required=True, type=Path, help="the phasegate binary")
    for name in ("jg", "scc", "pace-starter", "pace-docs", "autopilot"):
        ap.add_argument(f"--{name}", type=Path, help="upstream checkout")
    ap.add_argument("--work", type=Path, help="where to lay out the collected artifacts (default: a temporary directory)")
    ap.add_argument("--details", action="store_true", help="list every file with both verdicts")
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="phasegate-upstream-"))
    if work.exists() and a.work:
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)

    recs: list[Record] = []
    if a.jg:
        jg, dirs = collect_jg(a.jg, work)
        validate_jg(a.jg, work, jg, dirs)
        recs += jg
    if a.scc:
        scc = collect_scc(a.scc, work)
        validate_scc(a.scc, work, scc)
        recs += scc
    if a.pace_starter or a.pace_docs:
        pace = collect_pace(a.pace_starter, a.pace_docs, work)
        if a.pace_starter:
            validate_pace(a.pace_starter, work, pace)
        recs += pace
    if a.autopilot:
        recs += collect_autopilot(a.autopilot, work)

    found = phasegate(a.phasegate, work, ["jg", "scc", "pace", "autopilot"])
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    bad = []
    for r in recs:
        fs = found.get(r.rel, [])
        errs = [f for f in fs if f["severity"] == "error"]
        warns = [f for f in fs if f["severity"] == "warning"]
        pg = "error" if errs else "pass"
        up = r.up()
        t = table[r.family]
        t["files"] += 1
        t[f"{up}/{pg}"] += 1
        t["warnings"] += len(warns)
        t["files with warnings"] += bool(warns)
        if (up == "accept" and pg == "error") or (up == "reject" and pg == "pass"):
            bad.append((r, up, pg, errs))
        if a.details:
            print(f"{r.family:9} up={up:6} pg={pg:5} w={len(warns):2} {r.rel}  <- {r.source}")
            for v, verdict, detail in r.upstream:
                if verdict == "reject":
                    print(f"            {v}: {detail}")
            for f in errs:
                print(f"            phasegate {f['rule']}: {f['message'][:140]}")
    print()
    print("| family | files | upstream accepts: phasegate passes | upstream accepts: phasegate errors (false HOLD) | upstream rejects: phasegate errors | upstream rejects: phasegate passes (miss) | no upstream validator: passes | no upstream validator: errors | warnings (files) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    total = collections.Counter()
    for fam in ("jg", "scc", "pace", "autopilot"):
        if fam not in table:
            continue
        t = table[fam]
        total.update(t)
        print(f"| {fam} | {t['files']} | {t['accept/pass']} | {t['accept/error']} | {t['reject/error']} | {t['reject/pass']} | {t['n/a/pass']} | {t['n/a/error']} | {t['warnings']} ({t['files with warnings']}) |")
    print(f"| **all** | {total['files']} | {total['accept/pass']} | {total['accept/error']} | {total['reject/error']} | {total['reject/pass']} | {total['n/a/pass']} | {total['n/a/error']} | {total['warnings']} ({total['files with warnings']}) |")
    if bad:
        print("\nDisagreements:")
        for r, up, pg, errs in bad:
            print(f"- {r.rel} ({r.source}): upstream {up}, phasegate {pg}")
            for v, verdict, detail in r.upstream:
                print(f"    {v}: {verdict} {detail}")
            for f in errs:
                print(f"    phasegate {f['rule']}: {f['message'][:160]}")
    if UNREADABLE:
        print(f"\n{len(UNREADABLE)} blobs of kept paths were not in the clones and were skipped")
    print(f"\nartifacts laid out under {work}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
