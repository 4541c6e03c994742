"""`harnesslink doctor [--json]`: what is wired, what runs and what does not, each problem with the one
command that fixes it. Exit 0 when all is well, 1 when something needs the user.

Per harness found: its wiring (install.py's, found by its signature, or a plugin's, with their versions),
when each hook last ran (as the hooks record it, store/hook_runs.py), for Codex whether our hooks are trusted
(Codex's own answer, `hooks/list` of `codex app-server`), whether the memory server answers `tools/list`, and
the last banked turn. Then the private venv's version against this package's, the index's health and the
resident encoder, if there is one."""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import sqlite3
import subprocess
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import __version__
from ..errors import Refused
from ..fastsqlite import connect
from ..harnesses import registry
from ..harnesses.claude_code import plugin as claude_plugin
from ..harnesses.codex import plugin as codex_plugin
from ..paths import Locations
from ..store import hook_runs
from ..store.ledger import read_only_ledger
from ..wiring import environment, hook_command
from ..wiring.installer import WIRINGS

RPC_TIMEOUT = 15.0  # seconds for `codex app-server` or our memory server to answer
RECENT = 7 * 86400  # a wired hook silent for longer than this is named


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass
class Report:
    harnesses: dict[str, list[Check]] = field(default_factory=dict)
    general: list[Check] = field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [c for checks in [*self.harnesses.values(), self.general] for c in checks if not c.ok]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("doctor", help="Say what is wired, what runs and what does not, and how to fix it",
                                   description="What is wired, what runs and what does not; each problem with the "
                                               "command that fixes it. Exit 1 when something needs you.")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, locs: Locations) -> int:
    report = collect(locs)
    if args.json:
        print(json.dumps({"ok": not report.problems, "version": __version__,
                          "harnesses": {h: [asdict(c) for c in cs] for h, cs in report.harnesses.items()},
                          "general": [asdict(c) for c in report.general]}, indent=2))
    else:
        for title, checks in [*report.harnesses.items(), ("general", report.general)]:
            print(f"{title}:")
            for check in checks:
                print(f"  {'ok ' if check.ok else 'NO '} {check.name}: {check.detail}")
                if check.fix:
                    print(f"       fix: {check.fix}")
        print("all is well" if not report.problems else f"{len(report.problems)} problem(s) need you")
    return 1 if report.problems else 0


def collect(locs: Locations) -> Report:
    report = Report()
    venv_cli = environment.folder(locs) / "bin" / "harnesslink"
    for name, wiring in WIRINGS.items():
        by_install = _install_py_wiring(locs, wiring)
        plugin = _plugin(locs, name)
        if wiring.detect(locs) is None and not by_install.ok and plugin is None:
            continue
        checks = [by_install] if plugin is None or by_install.ok else []
        if plugin is not None:
            checks.append(Check("plugin", True, plugin))
        if not by_install.ok and plugin is None:
            by_install.fix = f"python install.py --harness {name}"
        wired = by_install.ok or plugin is not None
        if wired:
            checks += _hook_runs(locs, name)
            if name == "codex":
                checks.append(_codex_trust(locs))
            if by_install.ok and name in registry.MCP_SERVED:
                checks.append(_tools_list(locs, venv_cli, name, "python install.py (it makes the private venv again)"))
            elif plugin is not None:
                checks.append(_plugin_server(locs, name))
        checks.append(_last_banked(locs, name))
        report.harnesses[name] = checks
    report.general += [_venv_version(locs), _index_health(locs), _encoder(locs), *_orphan_plugin_venv(locs)]
    return report


def _install_py_wiring(locs: Locations, wiring: Any) -> Check:
    try:
        wired = bool(wiring.plan_uninstall(locs))  # what uninstall would take out: install.py's wiring
    except Refused as e:
        return Check("install.py", False, str(e), e.hint)
    version = _venv_installed_version(locs)
    return Check("install.py", wired, f"wired (venv {version or 'missing'})" if wired else "not wired")


def _plugin(locs: Locations, harness: str) -> str | None:
    """Which plugin of ours this harness has installed, with its version, or None."""
    if harness == "codex":
        try:
            import tomllib

            with open(os.path.join(codex_plugin.codex_home(locs), "config.toml"), "rb") as f:
                plugins = tomllib.load(f).get("plugins") or {}
        except (OSError, ValueError):
            return None
        entry = plugins.get(codex_plugin.PLUGIN_ID)
        if not isinstance(entry, dict) or entry.get("enabled") is False:
            return None
        cache = os.path.join(codex_plugin.codex_home(locs), "plugins", "cache", "harnesslink", "harnesslink")
        versions = os.listdir(cache) if os.path.isdir(cache) else []
        return f"{codex_plugin.PLUGIN_ID} {', '.join(sorted(versions)) or '(not in the cache)'}"
    if harness == "claude-code":
        stamp = os.path.join(_plugin_venv(locs, harness), claude_plugin.STAMP)
        try:
            with open(stamp, encoding="utf-8") as f:
                return f"harnesslink@harnesslink {f.read().split(' ')[0]}"
        except OSError:
            return None
    return None


def _plugin_venv(locs: Locations, harness: str) -> str:
    """Where the plugin of `harness` keeps its private venv."""
    if harness == "codex":
        return os.path.join(codex_plugin.data_folder(locs), "venv")
    folder = locs.env_folder("CLAUDE_CONFIG_DIR", str(locs.home / ".claude"))
    return os.path.join(folder, "plugins", "data", "harnesslink-harnesslink", "venv")


def _plugin_server(locs: Locations, harness: str) -> Check:
    venv = _plugin_venv(locs, harness)
    if not os.path.exists(os.path.join(venv, claude_plugin.STAMP)):
        return Check("memory server", False, f"the plugin's venv {venv} is not made yet",
                     f"start a {harness} session: it is made in the background (progress in its setup.log)")
    return _tools_list(locs, os.path.join(venv, "bin", "harnesslink"), harness,
                       f"rm -rf '{venv}' (the next {harness} session makes it again)")


def _hook_runs(locs: Locations, harness: str) -> list[Check]:
    checks = []
    now = time.time()
    for event in hook_command.EVENTS:
        last = hook_runs.last_run(locs, harness, event)
        if last is None:
            checks.append(Check(f"hook {event}", event in ("stop", "pre-compact"), "never ran",
                                "" if event in ("stop", "pre-compact") else _silent_fix(harness)))
            continue
        when, version = last
        age = now - when
        detail = f"ran {time.strftime('%Y-%m-%d %H:%M', time.localtime(when))} (version {version})"
        checks.append(Check(f"hook {event}", True, detail + (" — not in the last 7 days" if age > RECENT else "")))
    return checks


def _silent_fix(harness: str) -> str:
    if harness == "codex":
        return "start `codex`, type /hooks and trust the four HarnessLink hooks"
    return f"start a new {harness} session (hooks load at session start); if it stays silent: python install.py"


def _codex_trust(locs: Locations) -> Check:
    codex = shutil.which("codex", path=locs.env.get("PATH"))
    if codex is None:
        return Check("codex trust", True, "could not ask Codex (no `codex` on PATH)")
    hooks = _codex_hooks(codex, locs)
    if hooks is None:
        return Check("codex trust", True, "Codex did not answer hooks/list; could not tell")
    ours = [h for h in hooks if h.get("pluginId") == codex_plugin.PLUGIN_ID
            or hook_command.is_ours(h.get("command"), "codex")]
    if not ours:
        return Check("codex trust", False, "Codex lists none of our hooks", "python install.py --harness codex")
    untrusted = sorted(f"{h.get('eventName')}: {h.get('trustStatus')}" for h in ours
                       if h.get("trustStatus") not in ("trusted", "managed") or h.get("enabled") is False)
    if untrusted:
        return Check("codex trust", False, f"not trusted, so Codex skips them: {', '.join(untrusted)}",
                     "start `codex`, type /hooks and trust the four HarnessLink hooks")
    return Check("codex trust", True, f"{len(ours)} hooks trusted")


def _codex_hooks(codex: str, locs: Locations) -> list[dict] | None:
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"clientInfo": {"name": "harnesslink-doctor", "version": __version__}}},
                {"jsonrpc": "2.0", "method": "initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [os.getcwd()]}}]
    answer = _rpc([codex, "app-server"], requests, 2, locs.env)
    data = (answer or {}).get("result", {}).get("data") or []
    return [hook for entry in data for hook in entry.get("hooks") or []] if answer else None


def _tools_list(locs: Locations, cli: Any, harness: str, fix: str) -> Check:
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "harnesslink-doctor", "version": __version__}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    answer = _rpc([str(cli), "mcp", "--harness", harness], requests, 2, dict(locs.env))
    tools = [t.get("name") for t in ((answer or {}).get("result") or {}).get("tools") or []]
    if not tools:
        return Check("memory server", False, f"{cli} mcp did not answer tools/list (within {RPC_TIMEOUT:g} s)", fix)
    return Check("memory server", True, f"answers tools/list: {', '.join(tools)}")


def _rpc(argv: list[str], requests: list[dict], want_id: int, env: dict[str, str]) -> dict | None:
    """The answer with id `want_id` of a JSON-RPC server on stdio, or None (it failed, or did not answer
    within RPC_TIMEOUT: then it is killed, which ends the wait for its next line)."""
    import threading

    text = "".join(json.dumps(r) + "\n" for r in requests)
    try:
        with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env, text=True) as server:
            assert server.stdin is not None and server.stdout is not None
            deadline = threading.Timer(RPC_TIMEOUT, server.kill)
            deadline.start()
            try:
                server.stdin.write(text)
                server.stdin.flush()
                for line in server.stdout:
                    try:
                        message = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(message, dict) and message.get("id") == want_id:
                        return message
            finally:
                deadline.cancel()
                server.kill()
    except OSError:
        return None
    return None


def _last_banked(locs: Locations, harness: str) -> Check:
    try:
        ledger = read_only_ledger(locs)
        try:
            when = ledger.last_banked(harness) if ledger else None
        finally:
            if ledger:
                ledger.close()
    except sqlite3.Error as e:
        return Check("last banked", True, f"could not read the ledger ({e})")
    if when is None:
        return Check("last banked", True, "no turn banked yet")
    return Check("last banked", True, time.strftime("%Y-%m-%d %H:%M", time.localtime(when)))


def _venv_installed_version(locs: Locations) -> str | None:
    infos = glob.glob(str(environment.folder(locs) / "lib" / "python*" / "site-packages" / "harnesslink_hooks-*.dist-info"))
    return os.path.basename(infos[0]).removeprefix("harnesslink_hooks-").removesuffix(".dist-info") if infos else None


def _venv_version(locs: Locations) -> Check:
    if not environment.is_venv(environment.folder(locs)):
        return Check("private venv", True, "none (install.py was not run)")
    installed = _venv_installed_version(locs)
    if installed != __version__:
        return Check("private venv", False, f"holds {installed or 'no package'}, this package is {__version__}",
                     "python install.py (it upgrades the private venv)")
    return Check("private venv", True, f"holds {installed}, as this package")


def _index_health(locs: Locations) -> Check:
    if not locs.index_file.exists():
        return Check("index", True, "not made yet (the first pass makes it)")
    try:
        db = connect(str(locs.index_file), read_only=True, timeout=2)
        try:
            verdict = db.execute("PRAGMA quick_check").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error as e:
        verdict = str(e)
    if verdict != "ok":
        return Check("index", False, f"{locs.index_file} is broken ({verdict})", "harnesslink reindex")
    return Check("index", True, "healthy")


def _encoder(locs: Locations) -> Check:
    try:
        from ..recall import encoder_client
    except ImportError:
        return Check("resident encoder", True, "not part of this version")
    status = encoder_client.status(locs)
    return Check("resident encoder", True, f"running ({status})" if status else "not running (the hooks answer without it)")


def _orphan_plugin_venv(locs: Locations) -> list[Check]:
    folder = codex_plugin.data_folder(locs)
    if not os.path.isdir(folder) or _plugin(locs, "codex") is not None:
        return []
    return [Check("codex plugin venv", False, f"{folder} is left from a removed Codex plugin", f"rm -rf '{folder}'")]
