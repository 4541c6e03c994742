"""The four hooks and `context-hook` (SPEC §7), speaking each harness's protocol.

    context-hook <event> --harness <claude-code|codex|pi|omp> [--dry-run]
                 [--cwd DIR] [--prompt TEXT] [--session ID]

The harness's JSON arrives on stdin; the command-line options override it.
What goes to stdout (always exactly one JSON object, exit code always 0):

- Claude Code and Codex, session-start / user-prompt-submit with something to
  say: `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"…"}}`;
  with nothing to say, and for stop / pre-compact: `{}` (Codex validates hook
  output strictly and accepts only known fields; `{}` is a valid no-op
  everywhere, and an empty context would still add an empty message).
- pi and omp (our extension spawns us): `{"additionalContext": "…"}`, the
  text possibly empty.

Any failure (garbage stdin, a missing tree, a corrupt or locked index, a bug)
is logged to `locs.log_file` and answered with the empty answer.

The prompt hook runs on every prompt: it imports only what it needs, never
runs a pass inline (it starts a detached one when one is due), and answers
from the index as it is. It decides what to skip (`/…`, `!…`, too few
meaningful words, no memory for this project) before sqlite3 is imported;
tests/hooks/test_hot_path.py holds each hook to an allow-list of modules.
"""

from __future__ import annotations

import gc
import os
import sys

from . import WIRED_HARNESS_IDS, log, wirejson
from .banking import background

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
}
# the package face's copy of harnesses.registry.WIRED: the prompt hook may not import harnesses/ (test_hot_path.py)
HARNESS_IDS = WIRED_HARNESS_IDS
PLAIN_ANSWER = ("pi", "omp")  # our extension reads {"additionalContext"}; the others answer as Claude Code does
CONTEXT_EVENTS = ("session-start", "user-prompt-submit")
MAX_STDIN = 8 * 1024 * 1024
ENCODER_DEADLINE_MS = 30  # from asking: past it the hook answers by the words and the static vectors
SESSION_START_DEADLINE = 5.0  # seconds to the session-start hook's answer, whatever locks its pass and brief meet


class Options:
    def __init__(self) -> None:
        self.event = ""
        self.harness = "claude-code"
        self.dry_run = False
        self.cwd: str | None = None
        self.prompt: str | None = None
        self.session: str | None = None
        self.source: str | None = None


def parse_args(argv: list[str]) -> Options:
    """A forgiving parser: unknown options are ignored, a hook must never fail on its arguments."""
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        takes_value = name in ("--harness", "--agent", "--cwd", "--prompt", "--session", "--source")
        value = None
        if takes_value:
            if eq:
                value = inline
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
        if name in ("--harness", "--agent") and value:
            opts.harness = value
        elif name == "--cwd":
            opts.cwd = value
        elif name == "--prompt":
            opts.prompt = value
        elif name == "--session":
            opts.session = value
        elif name == "--source":
            opts.source = value
        elif arg == "--dry-run":
            opts.dry_run = True
        elif not arg.startswith("-") and not opts.event:
            opts.event = arg
        i += 1
    return opts


def answer(harness: str, event: str, context: str) -> dict:
    """The exact JSON object this harness accepts for this event."""
    if harness in PLAIN_ANSWER:
        return {"additionalContext": context}
    if event in CONTEXT_EVENTS and context:
        return {"hookSpecificOutput": {"hookEventName": EVENTS[event], "additionalContext": context}}
    return {}


def read_payload(stream) -> dict:
    """The hook's JSON input, or {} for anything else (empty, not JSON, not an object, a tty)."""
    try:
        if stream is None or stream.isatty():
            return {}
        data = stream.buffer.read(MAX_STDIN) if hasattr(stream, "buffer") else stream.read(MAX_STDIN)
    except (OSError, ValueError):
        return {}
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    if not data.strip():
        return {}
    try:
        value = wirejson.loads(data)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# --- the events -----------------------------------------------------------------


class Context:
    """Everything one hook run knows: options first, then the harness's JSON.

    `defer`: the hook is a process of its own (`process_main`), so bookkeeping the answer does not
    depend on waits until the answer is out (`after_answer` puts it in `deferred`)."""

    def __init__(self, opts: Options, payload: dict, *, defer: bool = False) -> None:
        from .paths import locations

        self.opts = opts
        self.defer = defer
        self.deferred: list = []  # work for after the answer, guarded (see `after_answer`)
        self.locs = locations()
        self.harness = opts.harness
        self.event = opts.event
        self.cwd = opts.cwd or _text(payload.get("cwd")) or os.getcwd()
        self.session = opts.session or _text(payload.get("session_id")) or _text(payload.get("sessionId")) or ""
        self.transcript = _text(payload.get("transcript_path"))
        self.prompt = opts.prompt if opts.prompt is not None else (_text(payload.get("prompt")) or "")
        self.source = opts.source or _text(payload.get("source")) or _text(payload.get("reason")) or ""
        self.last_message = _text(payload.get("last_assistant_message"))
        self.turn_id = _text(payload.get("turn_id"))  # Codex names the turn that ended
        self.notes: list[str] = []  # the dry run's explanation

    def log_error(self, message: str, exc: BaseException | None = None) -> None:
        log.error(self.locs, message, exc)

    def after_answer(self, work, failure: str, *, now: bool = False) -> None:
        """Bookkeeping the answer does not depend on: left for after the answer when the hook is a
        process of its own, done at once otherwise (or when `now`). Failures are logged."""
        def guarded() -> None:
            try:
                work()
            except Exception as exc:  # noqa: BLE001
                self.log_error(failure, exc)

        if self.defer and not now:
            self.deferred.append(guarded)
        else:
            guarded()


def prompt_context(ctx: Context) -> str:
    """Up to three matching past entries, framed; "" when nothing qualifies."""
    from .recall.terms import prompt_words, skip_reason
    from .store.scope import scope_folders

    kept_out = _kept_out(ctx)  # first: a changed config.yml is parsed here, once, not also by the pass beside it
    if not ctx.opts.dry_run:
        _start_pass_if_due(ctx)
    words = prompt_words(ctx.prompt)  # read once: every stage of the search takes them
    reason = kept_out or skip_reason(ctx.prompt, words)
    if reason:
        ctx.notes.append(f"no matches: {reason}")
        return ""
    folders = scope_folders(ctx.locs, ctx.cwd)
    projects = [p for p in folders if _has_bank(ctx.locs, p)]
    if ctx.opts.dry_run:
        ctx.notes += _joined_notes(ctx, folders)
    if not projects:
        ctx.notes.append("no matches: no memory for this project (nor for a linked one)")
        return ""
    from .store.trust import superseded_within

    superseded, withheld = superseded_within(ctx.locs, projects)  # never pushed (a pull shows them, marked)
    ctx.notes += [f"not pushed: {slug}: {why}; `harnesslink status` says what to do" for slug, why in withheld.items()]
    projects = [p for p in projects if p not in withheld]
    if not projects:
        ctx.notes.append("no matches: no project in scope whose trust state could be read")
        return ""
    encoding = _ask_encoder(ctx, projects)  # answered while the search is imported and the index read
    from .recall.matches import find_matches, in_index_as_it_is, render
    from .recall.query import foreign_paths as index_foreign_paths
    from .store.injected import Given

    given = Given(ctx.locs, ctx.harness, ctx.session)
    already = _injected(ctx, given)
    try:
        decision = in_index_as_it_is(ctx.locs, projects, lambda conn: find_matches(
            conn, ctx.prompt, projects, words=words, session_id=ctx.session, already_injected=already,
            hidden=index_foreign_paths(conn, folders) | superseded, encoding=encoding),
            ctx.notes, dry_run=ctx.opts.dry_run)
    finally:
        _after_encoder(ctx, encoding)
    if decision is None:
        return ""
    ctx.notes.append(f"projects searched: {', '.join(projects) or '(none)'}")
    ctx.notes.append(f"terms: {', '.join(decision.terms)}")
    if decision.skipped:
        ctx.notes.append(f"no matches: {decision.skipped}")
    if already:
        ctx.notes.append(f"already injected in this session (excluded): {len(already)}")
    if superseded:
        ctx.notes.append(f"superseded by a newer entry (excluded): {len(superseded)}")
    if ctx.opts.dry_run:  # what each candidate was and what each rule said: only the dry run prints it
        ctx.notes += decision.rules() + decision.explain()
        if not decision.hits and not decision.skipped:
            ctx.notes.append(f"stayed quiet: {decision.why_quiet()}")
    text = render(decision.hits, decision.terms, ctx.locs.memories_path)
    if text and not ctx.opts.dry_run and ctx.session:
        ids = decision.given()
        # a quick write waits for the answer to be out; creating the ledger first is not quick: now
        ctx.after_answer(lambda: given.add(ids), "could not remember injected entries", now=not given.ready())
    if not ctx.defer:  # a hook process leaves it to its end (see process_main)
        given.close()
    return text


def _ask_encoder(ctx: Context, projects: list[str]):
    """The prompt's vector asked of the resident encoder now, with the entries of `projects` nearest it, read
    when the candidates want them, within ENCODER_DEADLINE_MS of this moment (`encoder_client.Encoding`: it
    never raises, never waits longer)."""
    from .recall.encoder_client import NEAREST_ASKED, Encoding

    return Encoding(ctx.locs, [ctx.prompt], ENCODER_DEADLINE_MS, nearest=projects, limit=NEAREST_ASKED)


def _after_encoder(ctx: Context, encoding) -> None:
    """What the dry run says of the encoder; with none at the socket, one is started for the next prompt,
    after this one's answer (`recall.encoded.starts_on_demand`)."""
    if ctx.opts.dry_run:
        encoding.vectors()  # whether it answers, even when no candidate needed it
    encoding.close()
    if encoding.took_ms is not None:
        ctx.notes.append(f"encoder: answered in {encoding.took_ms:.1f} ms (deadline {ENCODER_DEADLINE_MS} ms)")
    elif encoding.why:
        ctx.notes.append(f"encoder: {encoding.why} (deadline {ENCODER_DEADLINE_MS} ms); judged by the words and "
                         "the static vectors")
    else:
        ctx.notes.append("encoder: not waited for (no candidate has an encoder vector)")
    if encoding.absent and not ctx.opts.dry_run:
        ctx.after_answer(lambda: _start_encoder(ctx), "could not start the encoder")


def _start_encoder(ctx: Context) -> None:
    from .recall import encoded, encoder_client

    if encoded.starts_on_demand(ctx.locs):
        encoder_client.ensure_started(ctx.locs)


def _joined_notes(ctx: Context, folders: dict) -> list[str]:
    from .store.identity import joined, repository_of

    own = next(iter(folders), "")
    others = joined(ctx.locs, own, ctx.cwd) if own else []
    return [f"joined by repository {repository_of(ctx.cwd)}: {', '.join(others)}"] if others else []


def _has_bank(locs, slug: str) -> bool:
    return os.path.isdir(os.path.join(locs.memories_path, slug, "bank"))


def session_context(ctx: Context) -> str:
    """A waiting handoff, then the brief (plus this session's state after a compaction or resume), within
    SESSION_START_DEADLINE of now: each wait on the way takes only what is left of it (`store.deadline`)."""
    from .store.deadline import within

    with within(SESSION_START_DEADLINE):
        return _handoff_and_brief(ctx)


def _handoff_and_brief(ctx: Context) -> str:
    from .recall.brief import DEFAULT_BUDGET, build_brief
    from .sessions.handoff import brief_budget, take
    from .store.trust import HOOK_READ

    if not ctx.opts.dry_run:
        _run_pass(ctx)
    reason = _kept_out(ctx)
    if reason:
        ctx.notes.append(f"no brief: {reason}")
        return ""
    with_state = ctx.source in ("resume", "compact", "fork")
    handoff = take(ctx.locs.agent_path, ctx.cwd, ctx.harness, peek=ctx.opts.dry_run, log=ctx.log_error)
    brief = build_brief(ctx.locs, ctx.cwd, ctx.harness, session_id=ctx.session, with_state=with_state,
                        budget=brief_budget(handoff, DEFAULT_BUDGET), trust_budget=HOOK_READ)
    ctx.notes += [f"not listed: {slug}: {why}; `harnesslink status` says what to do"
                  for slug, why in brief.withheld.items()]
    ctx.notes.append(f"brief sections: {', '.join(brief.included) or '(none)'}")
    if brief.dropped:
        ctx.notes.append(f"dropped under the budget: {', '.join(brief.dropped)}")
    if handoff:
        ctx.notes.append(f"handoff from `harnesslink resume`: {len(handoff)} characters (taken once)")
    if brief.given and not ctx.opts.dry_run and ctx.session:
        _remember_brief(ctx, brief.given)
    return "\n\n".join(text for text in (handoff, brief.text) if text)


def _remember_brief(ctx: Context, entries: list[str]) -> None:
    """The entries the brief lists are given to the session too (a later open of one counts), after the answer."""
    from .store.injected import Given

    given = Given(ctx.locs, ctx.harness, ctx.session)

    def remember() -> None:
        try:
            given.add(entries, in_brief=True)
        finally:
            given.close()

    ctx.after_answer(remember, "could not remember the entries the brief listed")


def stop(ctx: Context) -> None:
    """Bank the turn that just finished, from the transcript we were given, once the answer is out: the
    harness waits for this hook before the next prompt, and nothing it sees depends on the banking."""
    if ctx.opts.dry_run:
        ctx.notes.append(f"would bank the finished turn of {ctx.transcript or '(no transcript path)'}")
        return
    stopped_at = _now()

    def bank() -> None:
        from .banking.hook_passes import bank_finished_turn
        from .banking.pass_state import StopSignal

        bank_finished_turn(ctx.locs, StopSignal(ctx.harness, ctx.session, ctx.transcript, stopped_at,
                                                ctx.last_message, ctx.turn_id))

    ctx.after_answer(bank, "stop: banking the finished turn failed")


def pre_compact(ctx: Context) -> None:
    """Bank what is settled and refresh this session's state file, once the answer is out (the harness
    compacts only after this hook): the session-start hook after the compaction reads the transcript
    again before its brief (`source: compact`), waiting a moment for this pass if it still runs."""
    if ctx.opts.dry_run:
        ctx.notes.append(f"would bank settled turns and refresh the state of {ctx.transcript or '(no transcript)'}")
        return

    def bank() -> None:
        from .banking.hook_passes import bank_before_compaction

        bank_before_compaction(ctx.locs, ctx.harness, ctx.transcript)

    ctx.after_answer(bank, "pre-compact: banking failed")


HANDLERS = {"user-prompt-submit": prompt_context, "session-start": session_context, "stop": stop,
            "pre-compact": pre_compact}  # what each event says to the agent, if anything


def _now() -> float:
    import time

    return time.time()


def _kept_out(ctx: Context) -> str | None:
    """Nothing is injected in a project kept out (`memory.exclude`, `.harnesslink-off`)."""
    from .control.exclusion import is_excluded

    reason = is_excluded(ctx.locs, ctx.cwd)
    return f"this folder is kept out of memory ({reason})" if reason else None


def _start_pass_if_due(ctx: Context) -> None:
    try:
        if background.pass_due(ctx.locs):
            background.spawn_background_pass(ctx.locs)
    except Exception as exc:  # noqa: BLE001
        ctx.log_error("could not start a background pass", exc)


def _run_pass(ctx: Context) -> None:
    """Before the brief: after a compaction, the session's own transcript (its state file as it is now);
    and a small pass when one is due (`banking.hook_passes.session_start_pass`)."""
    own = ctx.transcript if ctx.source == "compact" else None
    try:
        if own or background.pass_due(ctx.locs):
            from .banking.hook_passes import session_start_pass

            session_start_pass(ctx.locs, ctx.harness, own)
    except Exception as exc:  # noqa: BLE001
        ctx.log_error("session-start pass failed", exc)


def _injected(ctx: Context, given) -> set[str]:
    try:
        return given.ids()
    except Exception as exc:  # noqa: BLE001 - without the ledger we may repeat ourselves, nothing worse
        ctx.log_error("could not read injected entries from the ledger", exc)
        return set()


# --- entry point ----------------------------------------------------------------


class HookRun:
    """One hook call's outcome: the JSON answer, the dry run's notes, and the work left for after
    the answer (only when the hook is a process of its own)."""

    def __init__(self, harness: str, event: str) -> None:
        self.harness, self.event = harness, event
        self.context = ""
        self.notes: list[str] = []
        self.deferred: list = []

    @property
    def answer(self) -> dict:
        return answer(self.harness, self.event, self.context)


class error_handler:
    """Whatever fails inside is logged and swallowed, never raised (a hook must never break the
    session): the hook then answers with the empty answer. `what` names it in the log."""

    def __init__(self, what: str, run: HookRun | None = None) -> None:
        self.what, self.run = what, run
        self.failed: BaseException | None = None

    def __enter__(self) -> error_handler:
        return self

    def __exit__(self, kind, exc, traceback) -> bool:
        if exc is None:
            return False
        self.failed = exc
        what = self.what if self.run is None else self.run.event or self.what
        log.error_anywhere(f"{what} failed", exc)
        if self.run is not None:
            self.run.notes.append(f"failed: {exc!r} (logged)")
            self.run.context = ""
        return True


USAGE = """usage: context-hook <event> --harness <claude-code|codex|pi|omp> [--dry-run] [--cwd DIR] [--prompt TEXT]
                    [--session ID] [--source SOURCE]

The hook the harnesses run (install.py wires it): reads the harness's JSON on stdin and prints the one
JSON object that harness accepts. Events: session-start, user-prompt-submit, stop, pre-compact.
--dry-run shows what would be injected and why, changing nothing. Unknown options are ignored.
"""


def run(argv: list[str], stdin=None, *, defer: bool = False) -> HookRun:
    """Handle one hook call. Never raises."""
    opts = parse_args(argv)
    result = HookRun(opts.harness if opts.harness in HARNESS_IDS else "claude-code", opts.event)
    with error_handler("hook", result):
        payload = read_payload(sys.stdin if stdin is None else stdin)
        if result.event not in EVENTS:
            result.event = _event_from_payload(payload) or result.event
        if opts.harness not in HARNESS_IDS:
            result.notes.append(f"unknown harness {opts.harness!r}: answering as claude-code")
        opts.harness, opts.event = result.harness, result.event
        if result.event not in EVENTS:
            result.notes.append(f"unknown event {result.event!r}: nothing to do")
            return result
        ctx = Context(opts, payload, defer=defer)
        if not opts.dry_run:
            ctx.after_answer(lambda: _record_run(ctx), "could not record that the hook ran", now=True)
        try:
            result.context = HANDLERS[result.event](ctx) or ""
        finally:
            result.notes += ctx.notes
            result.deferred = ctx.deferred
    return result


def _record_run(ctx: Context) -> None:
    from .store import hook_runs

    hook_runs.record(ctx.locs, ctx.harness, ctx.event, _now())


def _event_from_payload(payload: dict) -> str | None:
    name = payload.get("hook_event_name")
    for event, wire in EVENTS.items():
        if name == wire:
            return event
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the hook, print its answer, do its bookkeeping; always 0 (launchers `sys.exit(main())`)."""
    answer_and_leave(argv, defer=False)
    return 0


def answer_and_leave(argv: list[str] | None = None, *, defer: bool = True) -> list:
    """Run the hook and print its answer; the work left for after the answer (see `HookRun`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--help" in args or "-h" in args:  # a person asking, never a harness: the usage, nothing run
        with error_handler("hook output"):
            sys.stdout.write(USAGE)
            sys.stdout.flush()
        return []
    result = run(args, defer=defer)
    with error_handler("hook output") as output:  # even printing may fail (a closed pipe)
        if "--dry-run" in args:
            sys.stdout.write(_dry_run_report(args, result.answer, result.notes))
        else:
            _write_utf8(sys.stdout, wirejson.dumps(result.answer))
        sys.stdout.flush()
    if output.failed:
        with error_handler("hook output"):
            sys.stdout.write("{}")
            sys.stdout.flush()
    return result.deferred


def _write_utf8(stream, text: str) -> None:
    """UTF-8 whatever the locale says (the harnesses read UTF-8 JSON; a C locale would refuse `é`)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
    else:
        stream.flush()
        buffer.write(text.encode("utf-8", "surrogatepass"))


def _dry_run_report(args: list[str], result: dict, notes: list[str]) -> str:
    """What a person sees of a dry run, redacted whole: it echoes what they typed (a token pasted as the
    prompt, or by mistake as `--harness`), not only what memory holds."""
    import json

    from .redact import redact

    lines = [f"# context-hook {' '.join(args)}", "# dry run: nothing was banked, indexed or remembered"]
    lines += [f"# {note}" for note in notes]
    context = result.get("additionalContext")
    if context is None:
        context = result.get("hookSpecificOutput", {}).get("additionalContext", "")
    lines.append(f"# would inject {len(context)} characters; the hook would print:")
    lines.append(json.dumps(result, ensure_ascii=False, indent=2))
    return redact("\n".join(lines) + "\n")


def process_main(argv: list[str] | None = None) -> None:
    """The hook as a process of its own (`context-hook`, `hooks/<event>`, `python -m`): answer, then end
    at once. `os._exit` skips the interpreter's teardown and SQLite's checkpoint of the ledger when its
    last connection closes (an fsync: ~8 ms of every prompt that injected something); the ledger's
    own writers checkpoint it as usual. No garbage collection: a process this short leaves its cycles to the
    exit, and the collector's passes over every object the imports made were 3 % of the prompt hook's
    instructions."""
    gc.disable()
    deferred = answer_and_leave(argv)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        if deferred:
            background.leave_the_harness()
            for work in deferred:
                work()
    finally:
        os._exit(0)


def hook_script_main(event: str) -> int:
    """What `hooks/<event>` runs: the same as `context-hook <event> <its arguments>`."""
    process_main([event, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    process_main()
