"""A corpus generator: real transcripts, scaled into realistic histories.

The templates are the transcripts the real CLIs wrote (tests/fixtures/generated/<harness>/),
cut into a session header and one block of lines per turn kind:

- `bash`  a shell command and its output   (the real "Create the setup file" turn)
- `write` a file write                     (the real "Write down a note" turn)
- `long`  no tool, a long answer           (the real "Explain how this project is laid out" turn)
- `chat`  no tool, a short answer          (the real "thanks!" turn; the banker skips it)

A synthetic session is the header followed by turn blocks whose bytes are the real
lines with the prompt, command, tool output, answer, cwd, ids and clocks rewritten
(on the raw JSON text, so every field the CLI wrote stays where it wrote it). The
first turn of a session keeps the session-start lines the real first turn carries
(Claude Code's 130 KB of request snapshots, Codex's environment context); later
turns drop the line kinds only a first turn has.

Tool output sizes are drawn from the tool results found in the real fixtures
(tests/fixtures/real), so long outputs come at the rate they really do.

    python benchmarks/corpus.py --turns 1000 --home /tmp/somewhere   # writes HOME-shaped folders
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parent.parent
GENERATED = REPO / "tests" / "fixtures" / "generated"
SHARED = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "real"
HARNESS_MIX = (("claude-code", 0.40), ("codex", 0.30), ("pi", 0.15), ("omp", 0.15))
KIND_MIX = (("bash", 0.45), ("write", 0.15), ("long", 0.12), ("chat", 0.28))

TEMPLATE_FILES = {
    "claude-code": "claude-code/projects/-home-tester-project/469d47b9-1e89-4ecd-903f-05277a594c55.jsonl",
    "codex": "codex/sessions/2026/11/29/rollout-2026-11-29T20-13-34-01a228f1-08b0-7a32-b21c-a144bf99c702.jsonl",
    "pi": "pi/sessions/--home-tester-project--/2026-11-29T20-13-37-944Z_01a228f1-1517-73e0-8ff6-44d09acde9a1.jsonl",
    "omp": "omp/sessions/-project/2026-11-29T20-13-44-876Z_01a228f1-302c-712c-8256-3266c4353f12.jsonl",
}
# What the scripted fake model said in each template turn (tests/fixtures/generated/*/EXPECTED.md)
KIND_OF_PROMPT = {
    "Create the setup file for this project [[bash: echo harnesslink-e2e > setup.txt && ls]]": "bash",
    "Write down a note [[write: notes.txt | the fake model answers on 127.0.0.1]]": "write",
    "Explain how this project is laid out [[long]]": "long",
    "thanks!": "chat",
}
T_COMMAND = "echo harnesslink-e2e > setup.txt && ls"
T_OUTPUT = "setup.txt"
T_WRITE_PATH = "notes.txt"
T_WRITE_CONTENT = "the fake model answers on 127.0.0.1"
T_LONG = ("Here is a longer explanation so that this answer is clearly more than two hundred characters. The fake "
          "model writes it whenever a prompt asks for [[long]]; real banking logic should treat it as a substantive "
          "answer worth remembering, unlike a short chat reply.")
T_CWD = "/home/tester/project"
T_HOME = "/home/tester"

_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX8 = re.compile(rb'"[0-9a-f]{8}"')
_PREFIXED = re.compile(rb"\b(msg|toolu|req|call|fc|fco|resp|chatcmpl|retained)_([0-9A-Za-z]+)")
_ISO = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z")
_EPOCH = re.compile(rb"(?<![\w.])(1[78]\d{8})(\d{3})?(\.\d+)?(?![\w])")
_DONE = re.compile(rb'"Done\. The tool said:(?:[^"\\]|\\.)*"')
_OK = re.compile(rb'"OK: thanks!"')


def esc(text: str) -> bytes:
    """The text as it sits inside a JSON string."""
    return orjson.dumps(text)[1:-1]


# --- what the turns say ------------------------------------------------------------


@dataclass
class TurnSpec:
    kind: str  # bash | write | long | chat
    prompt: str
    answer: str
    command: str = "ls"
    output: str = ""
    path: str = "notes.md"
    content: str = ""


@dataclass
class SessionSpec:
    harness: str
    cwd: str
    start: float
    turns: list[TurnSpec]
    session_id: str = field(default_factory=lambda: str(uuid.uuid4()))


DOMAINS = {
    "shop-api": ("checkout cart payment invoice refund coupon order stripe webhook tax shipping customer "
                 "django celery postgres migration serializer", "python"),
    "mobile-app": ("screen navigation push notification login avatar upload offline sync redux hook "
                   "android ios build gradle expo", "typescript"),
    "infra": ("terraform module vpc subnet eks node pool helm chart ingress certificate dns alarm "
              "cloudwatch iam role bucket", "hcl"),
    "data-pipeline": ("airflow dag task spark job parquet partition schema warehouse dbt model backfill "
                      "kafka topic consumer lag snowflake", "python"),
    "cli-tool": ("argument parser subcommand config file flag completion release binary cross compile "
                 "rust crate cargo clippy error message", "rust"),
    "docs-site": ("page navigation sidebar search index theme markdown link checker deploy preview "
                  "redirect sitemap image hugo", "go"),
    "ml-service": ("model inference batch gpu tokenizer embedding cache latency endpoint onnx quantize "
                   "feature store training eval", "python"),
    "web-frontend": ("component form validation modal table pagination css tailwind router state "
                     "vite bundle storybook accessibility", "typescript"),
}
VERBS = ["Fix", "Refactor", "Speed up", "Add tests for", "Debug", "Document", "Clean up", "Investigate",
         "Rename", "Split", "Review", "Upgrade", "Simplify", "Add logging to", "Handle errors in"]
CONCERNS = ["is flaky in CI", "times out under load", "returns the wrong value", "leaks memory",
            "breaks on empty input", "logs too much", "is slow on large inputs", "fails after the upgrade",
            "crashes on startup", "double counts", "ignores the config", "drops the last item"]
CHAT = ["thanks!", "ok", "great, thanks", "looks good", "perfect", "nice", "go on", "yes please", "ship it",
        "sounds right", "ok do it", "cool"]
COMMANDS = {
    "python": ["pytest -x -q {a}", "python -m mypy {a}", "grep -rn {w} src/", "git diff --stat", "ruff check {a}",
               "python manage.py migrate", "git log --oneline -20"],
    "typescript": ["npm test -- {w}", "npx tsc --noEmit", "grep -rn {w} src/", "npm run lint", "git status"],
    "hcl": ["terraform plan -target=module.{w}", "terraform validate", "grep -rn {w} modules/", "tflint"],
    "rust": ["cargo test {w}", "cargo clippy", "cargo build --release", "grep -rn {w} src/", "git diff"],
    "go": ["go test ./...", "hugo --minify", "grep -rn {w} content/", "go vet ./..."],
}


class Writer:
    """Plausible prompts, commands, outputs and answers for one project's domain."""

    def __init__(self, rng: random.Random, domain: str, output_sizes: list[int]):
        self.rng = rng
        words, self.lang = DOMAINS[domain]
        self.words = words.split()
        self.output_sizes = output_sizes

    def w(self) -> str:
        return self.rng.choice(self.words)

    def sentence(self, n: int) -> str:
        filler = ("the a so then it we because now after before this that was is in on of to for with "
                  "when which still also only").split()
        out = [self.w() if self.rng.random() < 0.35 else self.rng.choice(filler) for _ in range(n)]
        return " ".join(out).capitalize() + "."

    def prompt(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return f"{self.rng.choice(VERBS)} the {self.w()} {self.w()} — it {self.rng.choice(CONCERNS)}"
        if r < 0.8:
            return f"Why does the {self.w()} {self.rng.choice(CONCERNS)}? {self.sentence(self.rng.randint(6, 30))}"
        return "\n".join(self.sentence(self.rng.randint(8, 25)) for _ in range(self.rng.randint(2, 8)))

    def output(self) -> str:
        size = self.rng.choice(self.output_sizes)
        lines, total = [], 0
        while total < size:
            line = f"src/{self.w()}/{self.w()}.py:{self.rng.randint(1, 900)}: {self.sentence(self.rng.randint(4, 14))}"
            lines.append(line)
            total += len(line) + 1
        return "\n".join(lines)[:max(size, 1)]

    def turn(self, kind: str) -> TurnSpec:
        if kind == "chat":
            return TurnSpec("chat", self.rng.choice(CHAT), "OK: " + self.rng.choice(["done", "noted", "will do"]))
        prompt = self.prompt()
        answer = " ".join(self.sentence(self.rng.randint(8, 22)) for _ in range(self.rng.randint(1, 6)))
        if kind == "long":
            answer = " ".join(self.sentence(self.rng.randint(10, 24)) for _ in range(self.rng.randint(3, 10)))
        command = self.rng.choice(COMMANDS[self.lang]).format(a=f"tests/test_{self.w()}.py", w=self.w())
        return TurnSpec(kind, prompt, answer, command=command, output=self.output(),
                        path=f"src/{self.w()}/{self.w()}.{ {'python': 'py', 'rust': 'rs', 'go': 'go', 'hcl': 'tf'}.get(self.lang, 'ts')}",
                        content=self.sentence(self.rng.randint(10, 60)))


def real_output_sizes() -> list[int]:
    """Lengths of every tool result in the shared real fixtures (Claude, Codex, pi/omp)."""
    sizes: list[int] = []
    for path in sorted(SHARED.rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            sizes += _result_sizes(obj)
    return [s for s in sizes if s > 0] or [200]


def _result_sizes(obj: object) -> list[int]:
    found = []
    if isinstance(obj, dict):
        kind = obj.get("type")
        if kind == "tool_result":
            content = obj.get("content")
            found.append(len(content) if isinstance(content, str) else len(orjson.dumps(content)))
        elif kind == "function_call_output" and isinstance(obj.get("output"), str):
            found.append(len(obj["output"]))
        elif obj.get("role") == "toolResult":
            found.append(len(orjson.dumps(obj.get("content"))))
        else:
            for value in obj.values():
                found += _result_sizes(value)
    elif isinstance(obj, list):
        for value in obj:
            found += _result_sizes(value)
    return found


# --- the real transcripts, cut into blocks -------------------------------------------


@dataclass
class Template:
    harness: str
    header: list[bytes]
    blocks: dict[str, list[bytes]]  # kind -> the real lines of that turn
    first_only: set[bytes]  # lines of the first turn that only a session's first turn has
    session_id: bytes
    t0: dict[str, float]  # kind -> the block's first clock (epoch seconds)


def _signature(obj: dict) -> tuple:
    payload = obj.get("payload") if isinstance(obj.get("payload"), dict) else {}
    attachment = obj.get("attachment") if isinstance(obj.get("attachment"), dict) else {}
    message = obj.get("message") if isinstance(obj.get("message"), dict) else {}
    return (obj.get("type"), payload.get("type"), attachment.get("type"), obj.get("subtype"), message.get("role"))


def _prompt_text(harness: str, obj: dict) -> str | None:
    if harness == "claude-code":
        msg = obj.get("message") or {}
        if obj.get("type") == "user" and isinstance(msg.get("content"), str):
            return msg["content"]
    elif harness == "codex":
        payload = obj.get("payload") or {}
        if obj.get("type") == "response_item" and payload.get("role") == "user":
            text = payload["content"][0].get("text", "")
            return text if text in KIND_OF_PROMPT else None
    else:
        msg = obj.get("message") or {}
        if obj.get("type") == "message" and msg.get("role") == "user":
            return msg["content"][0]["text"]
    return None


def _starts_block(harness: str, obj: dict) -> bool:
    if harness == "codex":
        return obj.get("type") == "event_msg" and (obj.get("payload") or {}).get("type") == "task_started"
    return _prompt_text(harness, obj) is not None


def load_template(harness: str) -> Template:
    path = GENERATED / TEMPLATE_FILES[harness]
    lines = path.read_bytes().splitlines()
    objs = [orjson.loads(raw) for raw in lines]
    starts = [i for i, obj in enumerate(objs) if _starts_block(harness, obj)]
    if harness == "claude-code":  # the queue lines written just before a prompt belong to its turn
        starts = [_back_over_queue(objs, i) for i in starts]
    header = lines[: starts[0]]
    blocks: dict[str, list[bytes]] = {}
    t0: dict[str, float] = {}
    order: list[str] = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        prompt = next((p for o in objs[start:end] if (p := _prompt_text(harness, o)) is not None), None)
        kind = KIND_OF_PROMPT.get(prompt or "")
        if kind is None or kind in blocks:
            continue
        blocks[kind] = lines[start:end]
        order.append(kind)
        t0[kind] = _first_clock(lines[start:end])
    first = order[0]
    later = {_signature(orjson.loads(raw)) for kind in order[1:] for raw in blocks[kind]}
    first_only = {raw for raw in blocks[first] if _signature(orjson.loads(raw)) not in later}
    sid = re.search(rb"_?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", path.stem.encode())
    return Template(harness, header, blocks, first_only, sid.group(1), t0)


def _back_over_queue(objs: list[dict], i: int) -> int:
    while i > 0 and objs[i - 1].get("type") == "queue-operation":
        i -= 1
    return i


def _first_clock(lines: list[bytes]) -> float:
    from datetime import datetime

    for raw in lines:
        m = _ISO.search(raw)
        if m:
            return datetime.fromisoformat(m.group(0).decode().replace("Z", "+00:00")).timestamp()
    raise ValueError("no timestamp in template block")


class Renderer:
    """Rewrites template lines into one synthetic session's lines."""

    def __init__(self, template: Template, spec: SessionSpec, home: str):
        self.t = template
        self.spec = spec
        self.home = home
        self.ids: dict[bytes, bytes] = {}
        self.instance = 0

    def _new_id(self, old: bytes, shape: str) -> bytes:
        key = old + b"|" + self.spec.session_id.encode() + b"|" + str(self.instance).encode()
        if old == self.t.session_id:
            return self.spec.session_id.encode()
        got = self.ids.get(key)
        if got is None:
            h = hashlib.blake2b(key, digest_size=16).hexdigest()
            if shape == "uuid":
                got = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}".encode()
            elif shape == "hex8":
                got = f'"{h[:8]}"'.encode()
            else:
                got = h[: max(8, len(old))].encode()
            self.ids[key] = got
        return got

    def lines(self, raws: list[bytes], turn: TurnSpec | None, delta: float) -> list[bytes]:
        out = []
        for raw in raws:
            line = raw
            if turn is not None:
                line = self._content(line, turn)
            line = line.replace(T_CWD.encode(), esc(self.spec.cwd)).replace(T_HOME.encode(), esc(self.home))
            line = line.replace(b"-home-tester-project", esc(_claude_dir(self.spec.cwd)))
            line = _UUID.sub(lambda m: self._new_id(m.group(0), "uuid"), line)
            line = _HEX8.sub(lambda m: self._new_id(m.group(0), "hex8"), line)
            line = _PREFIXED.sub(lambda m: m.group(1) + b"_" + self._new_id(m.group(2), "plain"), line)
            line = _ISO.sub(lambda m: _shift_iso(m.group(0), delta), line)
            line = _EPOCH.sub(lambda m: _shift_epoch(m, delta), line)
            out.append(line)
        return out

    def _content(self, line: bytes, turn: TurnSpec) -> bytes:
        answer = b'"' + esc(turn.answer) + b'"'  # a function, not a template: the answer may hold backslashes
        line = _DONE.sub(lambda _: answer, line)
        line = _OK.sub(lambda _: answer, line)
        line = line.replace(esc(T_LONG), esc(turn.answer))
        for prompt in KIND_OF_PROMPT:
            line = line.replace(esc(prompt), esc(turn.prompt))
        line = line.replace(esc(T_COMMAND), esc(turn.command))
        line = line.replace(esc(T_WRITE_CONTENT), esc(turn.content)).replace(T_WRITE_PATH.encode(), esc(turn.path))
        return line.replace(T_OUTPUT.encode(), esc(turn.output))

    def render(self) -> bytes:
        spec = self.spec
        first_kind = next(iter(self.t.blocks))
        out = self.lines(self.t.header, None, spec.start - self.t.t0[first_kind])
        at = spec.start
        for n, turn in enumerate(spec.turns):
            self.instance = n
            block = self.t.blocks.get(turn.kind) or self.t.blocks["bash"]
            if n > 0:
                block = [raw for raw in block if raw not in self.t.first_only]
            out += self.lines(block, turn, at - self.t.t0.get(turn.kind, self.t.t0["bash"]))
            at += 60 + (hash((spec.session_id, n)) % 540)
        return b"\n".join(out) + b"\n"


def _claude_dir(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def _shift_iso(value: bytes, delta: float) -> bytes:
    from datetime import datetime, timezone

    ts = datetime.fromisoformat(value.decode().replace("Z", "+00:00")).timestamp() + delta
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3].encode() + b"Z"


def _shift_epoch(m: re.Match, delta: float) -> bytes:
    seconds, millis, frac = m.group(1), m.group(2), m.group(3)
    if millis:
        return str(int(seconds + millis) + int(delta * 1000)).encode() + (frac or b"")
    if frac:
        return f"{float(seconds + frac) + delta:.7f}".encode()
    return str(int(seconds) + int(delta)).encode()


# --- placing sessions where each harness keeps them ------------------------------------


def transcript_path(home: Path, spec: SessionSpec) -> Path:
    import time

    stamp = time.gmtime(spec.start)
    if spec.harness == "claude-code":
        return home / ".claude" / "projects" / _claude_dir(spec.cwd) / f"{spec.session_id}.jsonl"
    if spec.harness == "codex":
        day = time.strftime("%Y/%m/%d", stamp)
        return home / ".codex" / "sessions" / day / (
            f"rollout-{time.strftime('%Y-%m-%dT%H-%M-%S', stamp)}-{spec.session_id}.jsonl")
    root = home / (".pi/agent/sessions" if spec.harness == "pi" else ".omp/agent/sessions")
    folder = "--" + spec.cwd.strip("/").replace("/", "-") + "--"
    return root / folder / f"{time.strftime('%Y-%m-%dT%H-%M-%S-000Z', stamp)}_{spec.session_id}.jsonl"


def write_session(home: Path, spec: SessionSpec, templates: dict[str, Template], *, fake_home: str) -> Path:
    path = transcript_path(home, spec)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(Renderer(templates[spec.harness], spec, fake_home).render())
    return path


def plan_sessions(turns: int, *, seed: int, now: float, days: float = 25.0, projects: int | None = None,
                  output_sizes: list[int] | None = None) -> list[SessionSpec]:
    """Sessions adding up to `turns` turns, over `projects` projects, all four harnesses, the last `days` days."""
    rng = random.Random(seed)
    sizes = output_sizes or real_output_sizes()
    n_projects = projects or max(4, min(400, turns // 250))
    domains = list(DOMAINS)
    cwds = [f"/home/dev/work/{domains[i % len(domains)]}{'' if i < len(domains) else f'-{i}'}"
            for i in range(n_projects)]
    writers = {cwd: Writer(random.Random(seed * 7919 + i), domains[i % len(domains)], sizes)
               for i, cwd in enumerate(cwds)}
    harnesses, h_weights = zip(*HARNESS_MIX)
    kinds, k_weights = zip(*KIND_MIX)
    sessions: list[SessionSpec] = []
    left = turns
    while left > 0:
        n = min(left, 1 + int(rng.expovariate(1 / 11)))
        cwd = rng.choice(cwds)
        harness = rng.choices(harnesses, h_weights)[0]
        start = now - days * 86400 * rng.random() - 3600 * 24
        writer = writers[cwd]
        specs = [writer.turn(rng.choices(kinds, k_weights)[0] if i else "bash") for i in range(n)]
        sessions.append(SessionSpec(harness, cwd, start, specs, str(uuid.UUID(int=rng.getrandbits(128)))))
        left -= n
    return sessions


def generate(home: Path, turns: int, *, seed: int = 1, now: float | None = None, projects: int | None = None,
             fake_home: str = "/home/dev") -> tuple[list[Path], list[SessionSpec]]:
    import time

    templates = {name: load_template(name) for name, _ in HARNESS_MIX}
    sessions = plan_sessions(turns, seed=seed, now=now or time.time(), projects=projects)
    return [write_session(home, s, templates, fake_home=fake_home) for s in sessions], sessions


def main() -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic transcript history into a HOME folder.")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    paths, sessions = generate(args.home, args.turns, seed=args.seed)
    size = sum(p.stat().st_size for p in paths)
    print(f"{len(sessions)} sessions, {sum(len(s.turns) for s in sessions)} turns, {len(paths)} files, "
          f"{size / 1e6:.1f} MB under {args.home}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
