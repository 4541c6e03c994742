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
tests/test_hot_path.py holds each hook to an allow-list of modules.
"""

from __future__ import annotations

import os
import sys

from . import log, wirejson
from .banking import background

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
}
HARNESS_IDS = ("claude-code", "codex", "pi", "omp")
_PROCESS = False  # set by `process_main`: this process ends as soon as it has answered
_AFTER_ANSWER: list = []  # work left for after the answer (see `after_answer`)
CONTEXT_EVENTS = ("session-start", "user-prompt-submit")
MAX_STDIN = 8 * 1024 * 1024
SESSION_START_BUDGET = 1024 * 1024  # bytes of new transcript per harness read before the brief


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
    if harness in ("pi", "omp"):
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
    """Everything one hook run knows: options first, then the harness's JSON."""

    def __init__(self, opts: Options, payload: dict) -> None:
        from .paths import locations

        self.opts = opts
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


def prompt_context(ctx: Context) -> str:
    """Up to three matching past entries, framed; "" when nothing qualifies."""
    from .recall.terms import skip_reason
    from .store.scope import scope_for

    if not ctx.opts.dry_run:
        _start_pass_if_due(ctx)
    reason = _kept_out(ctx) or skip_reason(ctx.prompt)
    if reason:
        ctx.notes.append(f"no matches: {reason}")
        return ""
    projects = [p for p in scope_for(ctx.locs, ctx.cwd) if _has_bank(ctx.locs, p)]
    if not projects:
        ctx.notes.append("no matches: no memory for this project (nor for a linked one)")
        return ""
    from .recall import index
    from .recall.injected import Given
    from .recall.matches import find_matches, render

    given = Given(ctx.locs, ctx.harness, ctx.session)
    already = _injected(ctx, given)
    try:
        conn = index.connect(ctx.locs, create=False, busy_ms=50)
    except index.IndexUnavailable as exc:
        ctx.notes.append(f"no matches: search index unavailable ({exc})")
        if not ctx.opts.dry_run:
            if isinstance(exc, index.IndexCorrupt):
                ctx.log_error(f"search index unusable, rebuilding in the background: {exc}")
            index.rebuild_in_background(ctx.locs)
        return ""
    try:
        if not ctx.opts.dry_run:
            _sync_quickly(ctx, conn, projects)
        decision = find_matches(conn, ctx.prompt, projects, session_id=ctx.session, already_injected=already)
    except index.sqlite3.OperationalError as exc:
        ctx.notes.append(f"no matches: search index busy ({exc})")
        ctx.log_error(f"search index busy: {exc}")
        return ""
    except index.sqlite3.DatabaseError as exc:
        ctx.notes.append(f"no matches: search index corrupt ({exc})")
        ctx.log_error(f"search index corrupt, rebuilding in the background: {exc}")
        if not ctx.opts.dry_run:
            conn.close()
            index.delete_index_files(ctx.locs)
            index.rebuild_in_background(ctx.locs)
        return ""
    finally:
        conn.close()
    ctx.notes.append(f"projects searched: {', '.join(projects) or '(none)'}")
    ctx.notes.append(f"terms: {', '.join(decision.terms)}")
    if decision.skipped:
        ctx.notes.append(f"no matches: {decision.skipped}")
    if already:
        ctx.notes.append(f"already injected in this session (excluded): {len(already)}")
    ctx.notes += decision.explain()
    text = render(decision.hits, decision.terms, ctx.locs.memories_path)
    if text and not ctx.opts.dry_run and ctx.session:
        ids = decision.given()
        # a quick write waits for the answer to be out; creating the ledger first is not quick: now
        after_answer(ctx, lambda: given.add(ids), "could not remember injected entries", now=not given.ready())
    if not _PROCESS:  # a hook process leaves it to its end (see process_main)
        given.close()
    return text


def _has_bank(locs, slug: str) -> bool:
    return os.path.isdir(os.path.join(locs.memories_path, slug, "bank"))


def _sync_quickly(ctx: Context, conn, projects: list[str]) -> None:
    """Index what changed since the last look, unless that is a lot: then a background job does it."""
    from .recall import index

    try:
        index.sync(conn, ctx.locs, projects, max_changes=50)
    except index.IndexBehind as exc:
        ctx.notes.append(f"index behind ({exc}); refreshing in the background")
        index.rebuild_in_background(ctx.locs, full=False)
    except index.sqlite3.OperationalError as exc:  # locked by a writer: search it as it is
        ctx.notes.append(f"index not refreshed ({exc})")


def session_context(ctx: Context) -> str:
    """A waiting handoff, then the brief (plus this session's state after a compaction or resume)."""
    from .recall.brief import DEFAULT_BUDGET, build_brief
    from .sessions.handoff import brief_budget, take

    if not ctx.opts.dry_run:
        _run_pass(ctx)
    reason = _kept_out(ctx)
    if reason:
        ctx.notes.append(f"no brief: {reason}")
        return ""
    with_state = ctx.source in ("resume", "compact", "fork")
    handoff = take(ctx.locs.agent_path, ctx.cwd, ctx.harness, peek=ctx.opts.dry_run, log=ctx.log_error)
    brief = build_brief(ctx.locs, ctx.cwd, ctx.harness, session_id=ctx.session, with_state=with_state,
                        budget=brief_budget(handoff, DEFAULT_BUDGET))
    ctx.notes.append(f"brief sections: {', '.join(brief.included) or '(none)'}")
    if brief.dropped:
        ctx.notes.append(f"dropped under the budget: {', '.join(brief.dropped)}")
    if handoff:
        ctx.notes.append(f"handoff from `harnesslink resume`: {len(handoff)} characters (taken once)")
    return "\n\n".join(text for text in (handoff, brief.text) if text)


def stop(ctx: Context) -> None:
    """Bank the turn that just finished, from the transcript we were given; leave the rest to a background pass."""
    if ctx.opts.dry_run:
        ctx.notes.append(f"would bank the finished turn of {ctx.transcript or '(no transcript path)'}")
        return
    from . import clock
    from .banking import autobank

    signal = autobank.StopSignal(ctx.harness, ctx.session, ctx.transcript, clock.now(), ctx.last_message,
                                 ctx.turn_id)
    paths = [_path(ctx.transcript)] if ctx.transcript else None
    report = autobank.run_pass(ctx.locs, paths=paths, stop=signal, harnesses=[ctx.harness])
    if report.locked or paths is not None or report.backlog:
        _start_pass_if_due(ctx)


def pre_compact(ctx: Context) -> None:
    """Bank what is settled and refresh this session's state file before the context is compacted."""
    if ctx.opts.dry_run:
        ctx.notes.append(f"would bank settled turns and refresh the state of {ctx.transcript or '(no transcript)'}")
        return
    from .banking import autobank

    paths = [_path(ctx.transcript)] if ctx.transcript else None
    autobank.run_pass(ctx.locs, paths=paths, harnesses=[ctx.harness])


def _path(text: str):
    from pathlib import Path

    return Path(os.path.expanduser(text))


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
    try:
        if not background.pass_due(ctx.locs):
            return
        from .banking import autobank

        # a small budget: a session should not start late because of a backlog; the rest drains
        # in a background pass
        report = autobank.run_pass(ctx.locs, budget=SESSION_START_BUDGET)
        if report.backlog:
            background.spawn_background_pass(ctx.locs)
    except Exception as exc:  # noqa: BLE001
        ctx.log_error("session-start pass failed", exc)


def _injected(ctx: Context, given) -> set[str]:
    try:
        return given.ids()
    except Exception as exc:  # noqa: BLE001 - without the ledger we may repeat ourselves, nothing worse
        ctx.log_error("could not read injected entries from the ledger", exc)
        return set()


def after_answer(ctx: Context, work, failure: str, *, now: bool = False) -> None:
    """Bookkeeping the answer does not depend on: done once the answer is out when the hook is a
    process of its own (see `process_main`), at once otherwise (or when `now`). Failures are logged."""
    def guarded() -> None:
        try:
            work()
        except Exception as exc:  # noqa: BLE001
            ctx.log_error(failure, exc)

    if _PROCESS and not now:
        _AFTER_ANSWER.append(guarded)
    else:
        guarded()


# --- entry point ----------------------------------------------------------------


def run(argv: list[str], stdin=None) -> tuple[dict, list[str]]:
    """Handle one hook call: the JSON answer and the dry run's notes. Never raises."""
    opts = parse_args(argv)
    notes: list[str] = []
    harness = opts.harness if opts.harness in HARNESS_IDS else "claude-code"
    event = opts.event
    context = ""
    try:
        payload = read_payload(sys.stdin if stdin is None else stdin)
        if event not in EVENTS:
            event = _event_from_payload(payload) or event
        if opts.harness not in HARNESS_IDS:
            notes.append(f"unknown harness {opts.harness!r}: answering as claude-code")
        opts.harness, opts.event = harness, event
        if event not in EVENTS:
            notes.append(f"unknown event {event!r}: nothing to do")
            return answer(harness, event, ""), notes
        ctx = Context(opts, payload)
        try:
            if event == "user-prompt-submit":
                context = prompt_context(ctx)
            elif event == "session-start":
                context = session_context(ctx)
            elif event == "stop":
                stop(ctx)
            elif event == "pre-compact":
                pre_compact(ctx)
        finally:
            notes += ctx.notes
    except BaseException as exc:  # noqa: BLE001 - a hook must never break the session
        log.error_anywhere(f"{event or 'hook'} failed", exc)
        notes.append(f"failed: {exc!r} (logged)")
        context = ""
    return answer(harness, event, context), notes


def _event_from_payload(payload: dict) -> str | None:
    name = payload.get("hook_event_name")
    for event, wire in EVENTS.items():
        if name == wire:
            return event
    return None


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result, notes = run(args)
        dry = "--dry-run" in args
        if dry:
            sys.stdout.write(_dry_run_report(args, result, notes))
        else:
            _write_utf8(sys.stdout, wirejson.dumps(result))
        sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - even printing may fail (closed pipe)
        log.error_anywhere("hook output failed", exc)
        try:
            sys.stdout.write("{}")
            sys.stdout.flush()
        except BaseException:  # noqa: BLE001
            pass
    return 0


def _write_utf8(stream, text: str) -> None:
    """UTF-8 whatever the locale says (the harnesses read UTF-8 JSON; a C locale would refuse `é`)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(text)
    else:
        stream.flush()
        buffer.write(text.encode("utf-8", "surrogatepass"))


def _dry_run_report(args: list[str], result: dict, notes: list[str]) -> str:
    import json

    lines = [f"# context-hook {' '.join(args)}", "# dry run: nothing was banked, indexed or remembered"]
    lines += [f"# {note}" for note in notes]
    context = result.get("additionalContext")
    if context is None:
        context = result.get("hookSpecificOutput", {}).get("additionalContext", "")
    lines.append(f"# would inject {len(context)} characters; the hook would print:")
    lines.append(json.dumps(result, ensure_ascii=False, indent=2))
    return "\n".join(lines) + "\n"


def process_main(argv: list[str] | None = None) -> None:
    """The hook as a process of its own (`context-hook`, `hooks/<event>`, `python -m`): answer, then end
    at once. `os._exit` skips the interpreter's teardown and SQLite's checkpoint of the ledger when its
    last connection closes (an fsync: ~8 ms of every prompt that injected something); the ledger's
    own writers checkpoint it as usual."""
    global _PROCESS
    _PROCESS = True
    main(argv)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        if _AFTER_ANSWER:
            _leave_the_harness()
            for work in _AFTER_ANSWER:
                work()
    finally:
        os._exit(0)


def _leave_the_harness() -> None:
    """Fork: the parent exits at once (the harness has its answer and moves on), the child returns
    to do the remaining work, having let go of the harness's pipes (the harness waits until every
    writer has closed them). Where there is no fork, this process simply carries on."""
    try:
        pid = os.fork()
    except OSError:
        return
    if pid:
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)


def hook_script_main(event: str) -> int:
    """What `hooks/<event>` runs: the same as `context-hook <event> <its arguments>`."""
    process_main([event, *sys.argv[1:]])
    return 0


if __name__ == "__main__":
    process_main()
