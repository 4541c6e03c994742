"""Background of real coding work for the scale test (queries_eleventh.json).

Each item of a real changelog or release note, as shipped inside a pinned source
distribution on PyPI, becomes one banked turn of a coding agent:

- prompt:  the problem as a user would ask for it, derived mechanically from the item
           ("Fixed a crash when X" -> "X crashes ... can you fix it?", "Added Y" -> "can we add Y?");
- command: a plausible command for that work (a test run on a module the item names, a grep, ...);
- answer:  the item's own text, with reStructuredText/Markdown markup removed.

Items are assigned to the eight example projects by topic keywords, then topped up round-robin
so every project gets the same number; harnesses go round-robin and timestamps climb over two
years from a fixed start, so the output is the same on every run (no randomness, no clock).

Sources (sdist, the files read inside it, the sdist's licence; the changelog text is the
projects' own and is used here as it ships in the sdist, under that licence):

    Django 4.2.16        docs/releases/*.txt                BSD-3-Clause
    SQLAlchemy 2.0.35    doc/build/changelog/changelog_*.rst MIT
    setuptools 75.1.0    NEWS.rst                           MIT
    pip 24.2             NEWS.rst                           MIT
    pytest 8.3.3         doc/en/changelog.rst               MIT
    Sphinx 7.4.7         CHANGES.rst                        BSD-2-Clause
    celery 5.4.0         Changelog.rst, docs/history/*.rst  BSD-3-Clause
    Scrapy 2.11.2        docs/news.rst                      BSD-3-Clause
    coverage 7.6.1       CHANGES.rst                        Apache-2.0
    Werkzeug 3.0.4       CHANGES.rst                        BSD-3-Clause
    Twisted 24.7.0       NEWS.rst                           MIT

Only the registry is used (``pip download --no-deps --no-binary NAME``: the sdist, while its build tools may come as wheels); sdists and the parsed
items are cached under .cache/real_work/ at the repository root (git-ignored). Nothing
downloaded is committed.

    python benchmarks/real_work.py --per-project 2000 --out DIR   # writes DIR/real_work.json
    python benchmarks/real_work.py --stats                        # items per source and project
"""
from __future__ import annotations

import argparse
import datetime as _dt
import fnmatch
import hashlib
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "real_work"

# name, version, file patterns inside the sdist (after its top folder), licence
SOURCES = [
    ("Django", "4.2.16", ["docs/releases/*.txt"], "BSD-3-Clause"),
    ("SQLAlchemy", "2.0.35", ["doc/build/changelog/changelog_*.rst"], "MIT"),
    ("setuptools", "75.1.0", ["NEWS.rst"], "MIT"),
    ("pip", "24.2", ["NEWS.rst"], "MIT"),
    ("pytest", "8.3.3", ["doc/en/changelog.rst"], "MIT"),
    ("Sphinx", "7.4.7", ["CHANGES.rst"], "BSD-2-Clause"),
    ("celery", "5.4.0", ["Changelog.rst", "docs/history/*.rst"], "BSD-3-Clause"),
    ("Scrapy", "2.11.2", ["docs/news.rst"], "BSD-3-Clause"),
    ("coverage", "7.6.1", ["CHANGES.rst"], "Apache-2.0"),
    ("Werkzeug", "3.0.4", ["CHANGES.rst"], "BSD-3-Clause"),
    ("Twisted", "24.7.0", ["NEWS.rst"], "MIT"),
]

PROJECTS = ["shop-api", "infra", "data-pipeline", "cli-tool",
            "ml-service", "mobile-app", "docs-site", "web-frontend"]
HARNESSES = ["claude-code", "codex", "pi", "omp"]

# topic words -> project (first match of the highest count wins; ties and misses are topped up)
TOPICS = {
    "shop-api": ["queryset", "model", "orm", "migration", "database", "postgres", "mysql", "sqlite",
                 "oracle", "transaction", "admin", "foreign key", "manytomany", "session", "select",
                 "insert", "relationship", "sql", "auth", "password", "permission", "form"],
    "infra": ["docker", "ssl", "tls", "certificate", "deploy", "proxy", "socket", "server", "wsgi",
              "asgi", "tcp", "dns", "ssh", "network", "reactor", "broker", "redis", "rabbitmq",
              "amqp", "connection pool", "ipv6", "endpoint"],
    "data-pipeline": ["task", "worker", "beat", "schedule", "retry", "queue", "chord", "group",
                      "canvas", "spider", "crawl", "feed", "item pipeline", "export", "csv",
                      "batch", "result backend", "serializ", "json", "pickle"],
    "cli-tool": ["command", "option", "argument", "--", "cli", "terminal", "console", "shell",
                 "install", "wheel", "sdist", "entry point", "setup.py", "pyproject", "editable",
                 "requirement", "resolver", "virtualenv", "environment variable", "exit code"],
    "ml-service": ["performance", "memory", "speed", "faster", "slow", "thread", "async",
                   "concurren", "cache", "coverage", "branch", "measure", "numeric", "decimal",
                   "float", "benchmark", "plugin", "fixture", "parametriz"],
    "mobile-app": ["locale", "translation", "i18n", "timezone", "time zone", "date", "datetime",
                   "unicode", "encoding", "utf-8", "windows", "macos", "pypy", "python 3.1",
                   "platform", "gettext"],
    "docs-site": ["doc", "sphinx", "latex", "html builder", "theme", "autodoc", "rst", "markup",
                  "toctree", "index", "search", "epub", "napoleon", "intersphinx", "linkcheck",
                  "directive", "role"],
    "web-frontend": ["template", "css", "javascript", "static", "csrf", "cookie", "url", "header",
                     "request", "response", "browser", "http", "redirect", "routing", "middleware",
                     "form widget", "multipart", "websocket"],
}

COMMANDS = {
    "shop-api": ["python manage.py test {mod}", "pytest tests/{mod} -q", "python manage.py migrate --plan",
                 "git log --oneline -15 -- {mod}"],
    "infra": ["kubectl -n prod logs deploy/{mod} --tail=200", "docker compose logs --tail=200 {mod}",
              "grep -rn '{ident}' deploy/ ansible/", "terraform plan -target=module.{mod}"],
    "data-pipeline": ["pytest tests/{mod} -q", "python -m pipeline.run --dry-run {mod}",
                      "grep -rn '{ident}' dags/ jobs/", "airflow tasks test {mod} run 2024-05-01"],
    "cli-tool": ["pytest tests/test_{mod}.py -q", "python -m cli --help", "grep -rn '{ident}' src/",
                 "pip install -e . && cli {mod} --verbose"],
    "ml-service": ["pytest tests/{mod} -q -x", "python -m cProfile -s cumtime serve.py",
                   "grep -rn '{ident}' service/", "python -X importtime -c 'import service' 2>&1 | tail"],
    "mobile-app": ["npx jest {mod}", "./gradlew test --tests '*{mod}*'", "grep -rn '{ident}' app/ src/",
                   "xcodebuild test -scheme App -only-testing:AppTests/{mod}"],
    "docs-site": ["make html SPHINXOPTS=-W", "sphinx-build -b linkcheck docs docs/_build",
                  "grep -rn '{ident}' docs/", "npm run build"],
    "web-frontend": ["npm test -- {mod}", "npx vitest run {mod}", "grep -rn '{ident}' src/",
                     "npm run build && npm run preview"],
}

HEADING_CHARS = set("=-~^*+#\"'`")


def _h(text: str) -> int:
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest()[:8], 16)


# ---------------------------------------------------------------- download and parse

def sdist(name: str, version: str) -> Path:
    """The cached sdist, fetched with pip from the package registry the first time."""
    dl = CACHE / "sdists"
    dl.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[-_.]+", "[-_.]", name.lower())

    def found():
        for p in sorted(dl.iterdir()):
            if re.fullmatch(stem + "-" + re.escape(version) + r"\.(tar\.gz|zip)", p.name.lower()):
                return p
        return None

    p = found()
    if p is None:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", name,
                        f"{name}=={version}", "-d", str(dl), "-q"], check=True)
        p = found()
        if p is None:
            raise SystemExit(f"pip download gave no sdist for {name}=={version}")
    return p


def clean(text: str) -> str:
    t = text
    t = re.sub(r":[\w:.+-]+:`~?([^`<]*?)\s*<[^`>]*>`", r"\1", t)         # :role:`text <target>`
    t = re.sub(r":[\w:.+-]+:`~?(?:[\w.]*\.)?([^`]*)`", r"\1", t)          # :role:`~a.b.c` -> c
    t = re.sub(r"`([^`<]+?)\s*<[^`>]+>`__?", r"\1", t)                    # `text <url>`_
    t = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", t)                        # [text](url)
    t = re.sub(r"``([^`]+)``", r"\1", t)
    t = re.sub(r"`([^`]+)`_?", r"\1", t)
    t = re.sub(r"\*\*([^*]+)\*\*", r"\1", t)
    t = re.sub(r"\s+", " ", t).strip()
    return t


def parse(lines: list[str]) -> list[tuple[str, str]]:
    """(section heading, item text) for every bullet item and every SQLAlchemy '.. change::' block."""
    out = []
    heading = ""
    i, n = 0, len(lines)
    bullet = re.compile(r"^(\s*)(?:[*+-]|\d+\.)\s+(\S.*)$")
    while i < n:
        line = lines[i].rstrip("\n")
        nxt = lines[i + 1].rstrip() if i + 1 < n else ""
        if line.strip() and nxt and len(set(nxt.strip())) == 1 and nxt.strip()[0] in HEADING_CHARS \
                and len(nxt.strip()) >= min(3, len(line.strip())) and not bullet.match(line):
            heading = line.strip()
            i += 2
            continue
        m = re.match(r"^(\s*)\.\. change::", line)
        b = bullet.match(line)
        if m or b:
            ind = len((m or b).group(1))
            body = [] if m else [b.group(2)]
            tags = ""
            i += 1
            while i < n:
                ln = lines[i].rstrip("\n")
                if ln.strip() and (len(ln) - len(ln.lstrip())) <= ind:
                    break
                s = ln.strip()
                if m and re.match(r"^:(tags|tickets|versions|changeset|pullreq):", s):
                    if s.startswith(":tags:"):
                        tags = s[6:].strip()
                elif s.startswith(".. "):
                    pass
                else:
                    body.append(s)
                i += 1
            text = clean(" ".join(body))
            out.append((tags or heading, text))
            continue
        i += 1
    return out


def items_of(name: str, version: str, patterns: list[str]) -> list[dict]:
    cached = CACHE / f"items-{name}-{version}.json"
    if cached.exists():
        return json.loads(cached.read_text(encoding="utf-8"))
    path = sdist(name, version)
    got = []
    with tarfile.open(path) as tf:
        members = sorted((m for m in tf.getmembers() if m.isfile()), key=lambda m: m.name)
        for mem in members:
            rel = mem.name.split("/", 1)[1] if "/" in mem.name else mem.name
            if not any(fnmatch.fnmatch(rel, p) for p in patterns):
                continue
            raw = tf.extractfile(mem).read().decode("utf-8", "replace").splitlines()
            for section, text in parse(raw):
                got.append({"source": f"{name} {version}", "file": rel, "section": section, "text": text})
    CACHE.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(got, ensure_ascii=False), encoding="utf-8")
    return got


def usable(text: str) -> bool:
    if not (60 <= len(text) <= 1600):
        return False
    if len(re.findall(r"[A-Za-z]{3,}", text)) < 8:
        return False
    low = text.lower()
    if low.startswith(("released ", "release date", "thanks", "patch by", "contributed by")):
        return False
    return True


def norm(text: str) -> str:
    t = re.sub(r"\(?(?:#|issue |ticket |gh-|pr )\d+\)?:?", " ", text.lower())
    return re.sub(r"[^a-z0-9]+", " ", t).strip()


# ---------------------------------------------------------------- turning an item into a turn

def first_sentence(text: str, limit: int = 230) -> str:
    t = re.sub(r"^(?:\(?(?:#|gh-|issue\s*#?|pr\s*#?)\d+\)?[:,]?\s*)+", "", text, flags=re.I)
    t = re.sub(r"^[A-Za-z ]{2,20}:\s+(?=[A-Z])", "", t) if _h(t) % 3 else t   # "LaTeX: ..." prefix, sometimes
    m = re.search(r"(?<=[a-z0-9)\]'\"])\.\s+(?=[A-Z(])", t)
    if m and m.start() > 25:
        t = t[:m.start()]
    t = t.rstrip(". ")
    if len(t) > limit:
        cut = t[:limit].rsplit(" ", 1)[0]
        t = cut.rstrip(",;:") + " ..."
    return t


def lower_first(s: str) -> str:
    w = s.split(" ", 1)[0]
    if not s or (len(s) > 1 and s[1].isupper()) or any(c.isupper() for c in w[1:]) or "_" in w or "." in w:
        return s
    return s[:1].lower() + s[1:]


FIX_RE = re.compile(r"^(?:fixed|fixes|fix|fixing|corrected|resolved|resolve)\s+"
                    r"(?:an?\s+|the\s+)?(?:(?:\w+\s+){0,3}?(?:regression|bug|crash|issue|problem|error|"
                    r"incompatibility|race condition|leak)s?\s+)?(?:\(?in [\w.]+ [\d.]+\)?\s+)?"
                    r"(?:where|that|when|which|causing|so that|in which|with|of|in|on|for)?\s*(.*)$", re.I)
ADD_RE = re.compile(r"^(?:added|adds|add|new|the new|introduced|introduce|implemented|support for|"
                    r"now supports?)\s+(.*)$", re.I)
DROP_RE = re.compile(r"^(?:removed|deprecated|dropped|drop|remove)\s+(.*)$", re.I)
IMPROVE_RE = re.compile(r"^(?:improved|improve|optimized|optimised|speed up|sped up|made|make|"
                        r"changed|allow|allowed|updated|update)\s+(.*)$", re.I)

FIX_T = ["{p} - can you fix it?", "we hit this: {p}. please fix", "{p}. Any idea why? fix it please",
         "bug report from a user: {p}", "Since the upgrade {p}. Track it down and fix", "{p} ... again. fix?"]
ADD_T = ["Can we add {p}?", "please add {p}", "I need {p}, can you implement it", "add {p} to the project"]
DROP_T = ["{p} is going away, update our code for it", "clean up: {p}", "get rid of {p} in our code"]
IMP_T = ["make this better: {p}", "{p} - can you change that?", "we want {p}", "please look at {p}"]
ANY_T = ["look into this and handle it: {p}", "{p}. what do we need to change?", "{p} - can you take care of it",
         "need help with this: {p}"]


def prompt_of(text: str) -> str:
    s = first_sentence(text)
    k = _h(text)
    for rx, templ in ((FIX_RE, FIX_T), (ADD_RE, ADD_T), (DROP_RE, DROP_T), (IMPROVE_RE, IMP_T)):
        m = rx.match(s)
        if m and len(m.group(1)) > 12:
            rest = m.group(1)
            if rx is DROP_RE:
                rest = s
            return templ[k % len(templ)].format(p=lower_first(rest))
    return ANY_T[k % len(ANY_T)].format(p=lower_first(s))


IDENT_RE = re.compile(r"\b[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+\b|\b[a-z]+_[a-z_]+\b|\b[A-Z][a-z]+[A-Z]\w+\b|--[a-z][\w-]+")


def command_of(project: str, text: str) -> str:
    ids = [i for i in IDENT_RE.findall(text)
           if not re.fullmatch(r"\d+(\.\d+)*", i) and len(i.split(".")[-1].strip("-")) >= 4]
    ident = ids[0] if ids else re.findall(r"[a-z]{5,}", text.lower())[0] if re.findall(r"[a-z]{5,}", text.lower()) else "TODO"
    mod = re.sub(r"[^a-z0-9_]", "", ident.split(".")[-1].lower().lstrip("-").replace("-", "_")) or "core"
    templ = COMMANDS[project][_h(text + project) % len(COMMANDS[project])]
    return templ.format(mod=mod, ident=ident.replace("'", ""))


def topic(text: str) -> str | None:
    low = text.lower()
    best, score = None, 0
    for proj in PROJECTS:
        sc = sum(low.count(w) for w in TOPICS[proj])
        if sc > score:
            best, score = proj, sc
    return best


def collect() -> list[dict]:
    seen, items = set(), []
    for name, version, pats, _lic in SOURCES:
        for it in items_of(name, version, pats):
            if not usable(it["text"]):
                continue
            key = norm(it["text"])
            if key in seen:
                continue
            seen.add(key)
            items.append(it)
    return items


def build(per_project: int) -> list[dict]:
    items = collect()
    buckets = {p: [] for p in PROJECTS}
    rest = []
    for it in items:
        p = topic(it["text"])
        (buckets[p] if p else rest).append(it)
    # a project with too many keyword items passes its surplus on; then top up round-robin
    for p in PROJECTS:
        if len(buckets[p]) > per_project:
            rest.extend(buckets[p][per_project:])
            buckets[p] = buckets[p][:per_project]
    rest.sort(key=lambda it: _h(it["text"]))
    for it in rest:
        short = [p for p in PROJECTS if len(buckets[p]) < per_project]
        if not short:
            break
        buckets[min(short, key=lambda p: (len(buckets[p]), PROJECTS.index(p)))].append(it)
    lacking = {p: per_project - len(b) for p, b in buckets.items() if len(b) < per_project}
    if lacking:
        raise SystemExit(f"not enough distinct items: {len(items)} in all, short by {lacking}")
    turns = []
    start = _dt.datetime(2023, 1, 2, 8, 0, tzinfo=_dt.timezone.utc)
    span = 2 * 365 * 24 * 3600
    for pi, p in enumerate(PROJECTS):
        for k, it in enumerate(buckets[p]):
            turns.append({
                "project": p,
                "harness": HARNESSES[(k + pi) % len(HARNESSES)],
                "prompt": prompt_of(it["text"]),
                "command": command_of(p, it["text"]),
                "answer": it["text"],
                "ts": (start + _dt.timedelta(seconds=span * k // per_project + pi * 97)).isoformat(),
                "source": it["source"],
            })
    turns.sort(key=lambda t: (t["ts"], t["project"]))
    return turns


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-project", type=int, default=2000)
    ap.add_argument("--out", help="folder; writes real_work.json there")
    ap.add_argument("--stats", action="store_true", help="print items per source and per project")
    a = ap.parse_args(argv)
    if a.stats:
        items = collect()
        by = {}
        for it in items:
            by[it["source"]] = by.get(it["source"], 0) + 1
        for s, c in by.items():
            print(f"{s:22} {c:6}")
        print(f"{'distinct usable items':22} {len(items):6}")
        tops = {}
        for it in items:
            t = topic(it["text"]) or "(none)"
            tops[t] = tops.get(t, 0) + 1
        print(json.dumps(tops))
        if not a.out:
            return 0
    if not a.out:
        ap.error("--out DIR is needed")
    turns = build(a.per_project)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "real_work.json").write_text(json.dumps(turns, ensure_ascii=False, indent=0), encoding="utf-8")
    print(f"{len(turns)} turns, {a.per_project} per project -> {out / 'real_work.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
