"""Lay out and check the hand-written question set in bench/questions/repos/.

Why this exists: the questions point at exact line ranges in exact releases of other
projects, so the code they were written against must be fetchable again, byte for byte,
by anyone. Each ``repos/<name>.json`` names a source (a PyPI sdist or wheel, an npm
tarball, a Debian binary or source package, or a pinned GitHub commit) with its sha256
or commit; this script downloads it with the ordinary client, verifies it, unpacks it
and places the manifest's ``root`` at ``WORK/<name>/``, keeping only the files that
match its ``include`` globs. Nothing is vendored into this repository.

    python bench/questions/layout.py [--work DIR] [--repo NAME ...]
    python bench/questions/layout.py --check

``--check`` validates every record of ``repos/*.jsonl`` against the laid-out trees:
fields, categories (semantic, architecture, symbol, topical), the number of targets per
category, that a topical query has 2 to 5 words, that each target file exists and each
line range lies inside it. It prints counts per repo, split, language, category and
split/category, and exits 1 on any problem.

Kinds and what they need on the machine:

* ``pypi``: ``pip download NAME==VER --no-deps`` (sdist first, wheel as a fallback).
* ``npm``: ``npm pack NAME@VER``.
* ``debian``: ``apt-get download NAME=VER`` then ``dpkg-deb -x``.
* ``debian-source``: ``apt-get source --download-only NAME=VER``; the upstream
  ``*.orig.tar.*`` is what is checked and unpacked (Debian's patches are not applied).
  apt needs a ``deb-src`` entry; ``--setup-apt`` writes one and runs ``apt-get update``.
* ``github``: ``git archive COMMIT`` from a bare mirror under ``--mirror DIR`` (or
  ``$NEXUS_QUESTIONS_MIRROR``), laid out as ``DIR/<owner>+<name>`` or ``DIR/<owner>/<name>``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOS = HERE / "repos"
DEFAULT_WORK = Path(os.environ.get("NEXUS_QUESTIONS_WORK", "/tmp/nexus-questions"))
KINDS = ("pypi", "npm", "debian", "debian-source", "github")
LANGUAGES = ("python", "go", "java", "javascript", "typescript", "rust")
SPLITS = ("tune", "heldout", "fresh")
CATEGORIES = ("semantic", "architecture", "symbol", "topical")
# most targets a record may name; topical queries name every span of their topic
TARGET_LIMITS = {"semantic": 3, "architecture": 4, "symbol": 3, "topical": 6}
STAMP_DIR = ".stamps"  # under WORK, so the laid-out trees hold only their own files
DEB_SRC_FILE = Path("/etc/apt/sources.list.d/nexus-questions-src.sources")
DEB_SRC_ENTRY = """Types: deb-src
URIs: http://deb.debian.org/debian
Suites: {suite}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
"""


@dataclass
class Manifest:
    """One repository entry: where its code comes from and which part is indexed."""

    name: str
    language: str
    split: str
    source: dict[str, str]
    root: str
    include: list[str] = field(default_factory=list)
    license: str = ""
    description: str = ""

    @property
    def stamp(self) -> str:
        """What identifies the laid-out tree: the source and the selection."""
        return json.dumps([self.source, self.root, self.include], sort_keys=True)


def load_manifests(names: list[str] | None = None) -> list[Manifest]:
    """Every ``repos/*.json``, or only the named ones (an unknown name is an error)."""
    found = {}
    for path in sorted(REPOS.glob("*.json")):
        data = json.loads(path.read_text())
        known = {k: v for k, v in data.items() if k in Manifest.__dataclass_fields__}
        found[data["name"]] = Manifest(**known)
    if names:
        missing = [n for n in names if n not in found]
        if missing:
            raise SystemExit(f"no manifest for: {', '.join(missing)}")
        return [found[n] for n in names]
    return list(found.values())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(cmd: list[str], cwd: Path) -> None:
    print("  $", " ".join(cmd))
    subprocess.run(cmd, cwd=cwd, check=True)


def verified(path: Path, expected: str) -> Path:
    actual = sha256_of(path)
    if actual != expected:
        raise SystemExit(f"sha256 mismatch for {path.name}: {actual} != {expected}")
    return path


def cached(cache: Path, expected: str) -> Path | None:
    """A file already in the cache with the expected digest, if any."""
    for path in cache.iterdir():
        if path.is_file() and sha256_of(path) == expected:
            return path
    return None


def fetch_pypi(src: dict[str, str], cache: Path) -> Path:
    spec = f"{src['package']}=={src['version']}"
    got = cached(cache, src["sha256"])
    if got:
        return got
    try:
        run(["pip", "download", spec, "--no-deps", "--no-binary", ":all:", "-d", "."], cache)
    except subprocess.CalledProcessError:
        run(["pip", "download", spec, "--no-deps", "--only-binary", ":all:", "-d", "."], cache)
    got = cached(cache, src["sha256"])
    if not got:
        raise SystemExit(f"pip download {spec} gave no file with sha256 {src['sha256']}")
    return got


def downloaded(src: dict[str, str], cache: Path, command: list[str]) -> Path:
    """The cached file with the source's digest, running ``command`` in the cache first
    when it is not there."""
    got = cached(cache, src["sha256"])
    if got:
        return got
    run(command, cache)
    got = cached(cache, src["sha256"])
    if not got:
        raise SystemExit(f"{' '.join(command)}: no file with sha256 {src['sha256']}")
    return got


def fetch_npm(src: dict[str, str], cache: Path) -> Path:
    return downloaded(src, cache, ["npm", "pack", f"{src['package']}@{src['version']}", "--silent"])


def fetch_debian(src: dict[str, str], cache: Path) -> Path:
    return downloaded(src, cache, ["apt-get", "download", f"{src['package']}={src['version']}"])


def fetch_debian_source(src: dict[str, str], cache: Path) -> Path:
    got = cached(cache, src["sha256"])
    if got:
        return got
    try:
        run(["apt-get", "source", "--download-only", f"{src['package']}={src['version']}"], cache)
    except subprocess.CalledProcessError as err:
        raise SystemExit(
            f"apt-get source {src['package']} failed; apt needs a deb-src entry "
            "(run once with --setup-apt)"
        ) from err
    for path in cache.glob("*.orig.tar.*"):
        if sha256_of(path) == src["sha256"]:
            return path
    raise SystemExit(f"apt-get source {src['package']}: no orig tarball with the pinned sha256")


def mirror_dir(src: dict[str, str], mirror: Path | None) -> Path:
    if mirror is None:
        raise SystemExit("github sources need --mirror DIR or $NEXUS_QUESTIONS_MIRROR")
    owner, name = src["repo"].split("/", 1)
    for cand in (mirror / f"{owner}+{name}", mirror / owner / name, mirror / name):
        if cand.is_dir():
            return cand
    raise SystemExit(f"no mirror of {src['repo']} under {mirror}")


def unpack_archive(archive: Path, dest: Path) -> None:
    """Unpack a tarball, zip/wheel or .deb into dest (paths outside dest are refused)."""
    name = archive.name
    if name.endswith(".deb"):
        subprocess.run(["dpkg-deb", "-x", str(archive), str(dest)], check=True)
    elif name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if ".." in Path(member).parts or member.startswith("/"):
                    raise SystemExit(f"unsafe path in {name}: {member}")
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tf:
            tf.extractall(dest, filter="data")


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A gitignore-style glob as a regex over a relative path.

    A pattern with a slash (other than a trailing one) is anchored at the root; one
    without matches at any depth. ``**`` spans folders, ``*`` and ``?`` stay inside one
    name, and a trailing slash (or a folder match) keeps everything under that folder.
    """
    anchored = "/" in pattern.rstrip("/")
    pat = pattern.strip("/")
    out = ""
    i = 0
    while i < len(pat):
        if pat.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pat.startswith("**", i):
            out += ".*"
            i += 2
        elif pat[i] == "*":
            out += "[^/]*"
            i += 1
        elif pat[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pat[i])
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{out}(?:/.*)?$")


def selected(rel: str, include: list[str]) -> bool:
    """Whether a path is kept: the last matching pattern wins, ``!`` negates."""
    if not include:
        return True
    keep = False
    for pattern in include:
        negate = pattern.startswith("!")
        if glob_regex(pattern[1:] if negate else pattern).match(rel):
            keep = not negate
    return keep


def place(unpacked: Path, manifest: Manifest, target: Path) -> int:
    """Copy the manifest's root out of an unpacked archive, keeping included files."""
    root = unpacked / manifest.root
    if not root.is_dir():
        raise SystemExit(f"{manifest.name}: root {manifest.root!r} not in the archive")
    count = 0
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(root).as_posix()
        if selected(rel, manifest.include):
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest)
            count += 1
    return count


def lay_out(manifest: Manifest, work: Path, mirror: Path | None) -> None:
    target = work / manifest.name
    stamp = work / STAMP_DIR / f"{manifest.name}.json"
    if stamp.exists() and stamp.read_text() == manifest.stamp:
        print(f"{manifest.name}: present")
        return
    src = manifest.source
    kind = src["kind"]
    if kind not in KINDS:
        raise SystemExit(f"{manifest.name}: unknown source kind {kind!r}")
    print(f"{manifest.name}: {kind} {src.get('package', src.get('repo'))} {src.get('version', '')}")
    cache = work / ".cache" / manifest.name
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        unpacked = Path(tmp) / "x"
        unpacked.mkdir()
        if kind == "github":
            git_dir = mirror_dir(src, mirror)
            archive = Path(tmp) / "src.tar"
            with archive.open("wb") as fh:
                subprocess.run(
                    ["git", f"--git-dir={git_dir}", "archive", src["commit"]], stdout=fh, check=True
                )
        else:
            fetchers = {
                "pypi": fetch_pypi,
                "npm": fetch_npm,
                "debian": fetch_debian,
                "debian-source": fetch_debian_source,
            }
            archive = verified(fetchers[kind](src, cache), src["sha256"])
        unpack_archive(archive, unpacked)
        if target.exists():
            shutil.rmtree(target)
        count = place(unpacked, manifest, target)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(manifest.stamp)
    print(f"{manifest.name}: {count} files at {target}")


def setup_apt() -> None:
    """Add a deb-src entry for this system's Debian suite and refresh the lists."""
    suite = "bookworm"
    os_release = Path("/etc/os-release")
    if os_release.exists():
        match = re.search(r"^VERSION_CODENAME=(\w+)", os_release.read_text(), re.M)
        if match:
            suite = match.group(1)
    DEB_SRC_FILE.write_text(DEB_SRC_ENTRY.format(suite=suite))
    subprocess.run(["apt-get", "update"], check=True)


REQUIRED = {"id": str, "repo": str, "category": str, "query": str, "targets": list}


def check_range(root: Path, ref: object, where: str, problems: list[str]) -> None:
    """One target or secondary reference: a file, optionally with a line range."""
    if not isinstance(ref, dict) or not isinstance(ref.get("file"), str):
        problems.append(f"{where}: needs a 'file'")
        return
    path = root / ref["file"]
    if not path.is_file():
        problems.append(f"{where}: no file {ref['file']}")
        return
    has_start, has_end = "start_line" in ref, "end_line" in ref
    if has_start != has_end:
        problems.append(f"{where}: start_line and end_line go together")
        return
    if not has_start:
        return
    start, end = ref["start_line"], ref["end_line"]
    lines = len(path.read_text(errors="replace").splitlines())
    if not (isinstance(start, int) and isinstance(end, int) and 1 <= start <= end <= lines):
        problems.append(f"{where}: lines {start}-{end} not within 1-{lines} of {ref['file']}")


def check(work: Path) -> int:
    """Validate every query record; print counts; return the number of problems."""
    manifests = {m.name: m for m in load_manifests()}
    problems: list[str] = []
    per: dict[str, Counter[str]] = {
        "repo": Counter(),
        "split": Counter(),
        "language": Counter(),
        "category": Counter(),
        "split/category": Counter(),
    }
    per_repo_cat: dict[str, Counter[str]] = {}
    seen: set[str] = set()
    for m in manifests.values():
        if m.language not in LANGUAGES:
            problems.append(f"{m.name}.json: language {m.language!r}")
        if m.split not in SPLITS:
            problems.append(f"{m.name}.json: split {m.split!r}")
        if m.source.get("kind") not in KINDS:
            problems.append(f"{m.name}.json: source kind {m.source.get('kind')!r}")
        if not (REPOS / f"{m.name}.jsonl").exists():
            problems.append(f"{m.name}.json: no {m.name}.jsonl")
    for path in sorted(REPOS.glob("*.jsonl")):
        name = path.stem
        manifest = manifests.get(name)
        if manifest is None:
            problems.append(f"{path.name}: no {name}.json manifest")
            continue
        root = work / name
        if not root.is_dir():
            problems.append(f"{path.name}: {root} is not laid out (run without --check)")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.name}:{number}"
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as err:
                problems.append(f"{where}: bad JSON ({err})")
                continue
            bad = [k for k, t in REQUIRED.items() if not isinstance(rec.get(k), t)]
            if bad:
                problems.append(f"{where}: missing or mistyped {', '.join(bad)}")
                continue
            where = f"{path.name}:{rec['id']}"
            if rec["id"] in seen:
                problems.append(f"{where}: duplicate id")
            seen.add(rec["id"])
            if rec["repo"] != name or not rec["id"].startswith(f"{name}-"):
                problems.append(f"{where}: repo/id do not match {name}")
            if rec["category"] not in CATEGORIES:
                problems.append(f"{where}: category {rec['category']!r}")
            if not rec["query"].strip():
                problems.append(f"{where}: empty query")
            if rec["category"] == "topical" and not 2 <= len(rec["query"].split()) <= 5:
                problems.append(f"{where}: a topical query has 2 to 5 words")
            limit = TARGET_LIMITS.get(rec["category"], 3)
            if not 1 <= len(rec["targets"]) <= limit:
                problems.append(f"{where}: {len(rec['targets'])} targets (1-{limit})")
            for ref in rec["targets"]:
                check_range(root, ref, where, problems)
            for ref in rec.get("secondary", []):
                check_range(root, ref, f"{where} (secondary)", problems)
            per["repo"][name] += 1
            per["split"][manifest.split] += 1
            per["language"][manifest.language] += 1
            per["category"][rec["category"]] += 1
            per["split/category"][f"{manifest.split}/{rec['category']}"] += 1
            per_repo_cat.setdefault(name, Counter())[rec["category"]] += 1
    for repo, count in sorted(per["repo"].items()):
        m = manifests[repo]
        cats = " ".join(f"{c}={per_repo_cat[repo][c]}" for c in CATEGORIES)
        print(f"{repo:24} {m.language:11} {m.split:8} {count:3}  {cats}")
    for key in ("split", "language", "category", "split/category"):
        print(f"by {key}: " + ", ".join(f"{k}={v}" for k, v in sorted(per[key].items())))
    print(f"total: {sum(per['repo'].values())} queries in {len(per['repo'])} repos")
    for problem in problems:
        print("PROBLEM", problem)
    return len(problems)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="where repos are laid out")
    parser.add_argument("--repo", action="append", help="only this repo (repeatable)")
    parser.add_argument(
        "--mirror",
        type=Path,
        default=os.environ.get("NEXUS_QUESTIONS_MIRROR"),
        help="folder of bare git mirrors for github sources",
    )
    parser.add_argument("--check", action="store_true", help="validate the query files")
    parser.add_argument(
        "--setup-apt", action="store_true", help="add a deb-src entry and run apt-get update first"
    )
    args = parser.parse_args(argv)
    work = args.work.resolve()
    if args.check:
        return 1 if check(work) else 0
    if args.setup_apt:
        setup_apt()
    work.mkdir(parents=True, exist_ok=True)
    mirror = Path(args.mirror) if args.mirror else None
    for manifest in load_manifests(args.repo):
        lay_out(manifest, work, mirror)
    return 0


if __name__ == "__main__":
    sys.exit(main())
