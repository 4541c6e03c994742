"""The Claude Code plugin's launcher (plugins/harnesslink/launch.py): hooks and memory tools without install.py.

`claude plugin install harnesslink@harnesslink` wires nothing in the user's files: the plugin's own
plugin.json names the hooks and the MCP server, each a call of launch.py, which comes here. It runs with
the `python3` on PATH and the standard library only (the dependencies live in the private venv it makes):

- the private venv is `$CLAUDE_PLUGIN_DATA/venv`, made as install.py makes its own (environment.build_venv),
  by a detached `setup` the first hook starts; Claude Code removes that folder when the plugin is uninstalled.
  Once made it gets `cloud.autobank` for claude-code and the first backfill, as install.py does;
- a hook waits for the venv only as long as its timeout allows (session-start, the MCP server: WAIT seconds;
  the others not at all), then does nothing and lets the setup finish in the background;
- install.py's wiring wins: while settings.json holds install.py's hooks, the plugin's hooks exit at once,
  and while ~/.claude.json holds install.py's memory server, the plugin's server steps aside, so a session
  never gets the memory twice. uninstall.py takes install.py's wiring out and the plugin takes over again.

A ready venv carries a stamp naming the plugin folder and version it was built from; a plugin update (a new
folder) refreshes it in the background while the old one keeps serving. A setup that fails (no network for
pip, say) records how many times it failed in a row (`setup.failed`, its time the file's); the hooks try again
only once RETRY_AFTER has passed since (1 min, 5 min, 30 min, then every 3 hours), not on every call.
"""

from __future__ import annotations

import os
import sys

from ... import __version__
from ...paths import Locations, locations

TYPE_CHECKING = False  # a hook call imports neither typing nor pathlib, re, json or subprocess when it can help it
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

HARNESS = "claude-code"
WAIT = {"session-start": 20.0, "mcp": 20.0}  # seconds; the hooks' timeouts in plugin.json are 30
STAMP = "harnesslink-plugin.stamp"
RETRY_AFTER = (60, 300, 1800, 10800)  # seconds after the 1st, 2nd, 3rd, and every later failed setup in a row


class Plugin:
    def __init__(self, root: str, data: str, harness: str = HARNESS, words: tuple[str, ...] = ()) -> None:
        self.root = root  # $CLAUDE_PLUGIN_ROOT: the plugin folder (package, pyproject.toml)
        self.data = data  # $CLAUDE_PLUGIN_DATA: ours until the plugin is uninstalled
        self.harness = harness
        self.words = words  # what launch.py is told before the call itself ("codex" for Codex's plugin)
        self.source = root  # what pip builds the venv from (Codex copies the plugin without the package)
        self.venv = os.path.join(data, "venv")
        self.log = os.path.join(data, "setup.log")
        self.lock = os.path.join(data, "setup.lock")
        self.failed = os.path.join(data, "setup.failed")  # how many setups failed in a row; its time, the last's

    def exe(self, name: str) -> str:
        return os.path.join(self.venv, "bin", name)

    def stamp(self) -> str:
        """What the venv was built from: the version and the plugin folder (an update brings a new one)."""
        return f"{__version__} {self.root}\n"

    def usable(self) -> bool:
        return os.path.exists(self.exe("context-hook")) and os.path.exists(os.path.join(self.venv, STAMP))

    def current(self) -> bool:
        try:
            with open(os.path.join(self.venv, STAMP), encoding="utf-8") as f:
                return f.read() == self.stamp()
        except OSError:
            return False


def main(argv: list[str] | None = None, env: dict[str, str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ if env is None else env)
    root, data = env.get("CLAUDE_PLUGIN_ROOT"), env.get("CLAUDE_PLUGIN_DATA")
    if not root or not data:
        _say("HarnessLink plugin: CLAUDE_PLUGIN_ROOT or CLAUDE_PLUGIN_DATA is not set; Claude Code runs this, not you")
        return 0
    return dispatch(Plugin(root, data), words, env, install_py_hooks_present, install_py_server_present)


def dispatch(plugin: Plugin, words: list[str], env: dict[str, str],
             hooks_wired: Callable[[Locations], bool], server_wired: Callable[[Locations], bool]) -> int:
    """One call of the launcher; `hooks_wired` and `server_wired` say whether install.py wired this harness."""
    locs = locations(env)
    if words[:1] == ["setup"]:
        return setup(plugin, env)
    if words[:1] == ["first-run"]:
        return first_run(plugin, locs, env)
    if words[:1] == ["mcp"]:
        if server_wired(locs):
            _say(f"HarnessLink plugin: install.py's memory server serves the tools for {plugin.harness}; "
                 "the plugin's server steps aside")
            return 0
        return serve_tools(plugin, env)
    if words[:1] == ["hook"] and len(words) > 1:
        if hooks_wired(locs):
            return 0  # install.py's hooks answer this event; the plugin steps aside
        return run_hook(plugin, words[1], env)
    _say(f"HarnessLink plugin: unknown call {words!r} (expected: hook <event>, mcp, setup)")
    return 0


def run_hook(plugin: Plugin, event: str, env: dict[str, str]) -> int:
    if not _ready(plugin, env, WAIT.get(event, 0.0)):
        _say(_not_ready(plugin))
        if event == "session-start":
            import json

            print(json.dumps({"systemMessage": f"HarnessLink is setting up its environment ({plugin.log})"}))
        return 0
    exe = plugin.exe("context-hook")
    os.execv(exe, [exe, event, "--harness", plugin.harness])
    return 0  # not reached


def serve_tools(plugin: Plugin, env: dict[str, str]) -> int:
    if not _ready(plugin, env, WAIT["mcp"]):
        _say(_not_ready(plugin) + "; the memory tools come with the session after that")
        return 1
    exe = plugin.exe("harnesslink")
    os.execv(exe, [exe, "mcp", "--harness", plugin.harness])
    return 0  # not reached


def install_py_hooks_present(locs: Locations) -> bool:
    """Whether Claude Code's settings.json holds hooks install.py wrote (found by their signature)."""
    # harnesses.claude_code.home, spelled out: that module needs the venv's dependencies
    folder = locs.env_folder("CLAUDE_CONFIG_DIR", os.path.join(locs.home_path, ".claude"))
    return holds_our_hooks(os.path.join(folder, "settings.json"), HARNESS)


def holds_our_hooks(path: str, harness: str) -> bool:
    """Whether the hooks JSON file at `path` holds hooks install.py wrote for `harness` (by their signature)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return False
    if "context-hook" not in text:  # every signature names it: no need to parse
        return False
    import json

    from ...wiring.hook_command import is_ours
    from ...wiring.hooks_json import unmerge

    try:
        settings = json.loads(text)
    except ValueError:
        return False
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    if not isinstance(hooks, dict) or not all(isinstance(groups, list) for groups in hooks.values()):
        return False  # not a shape install.py writes (nor one Claude Code reads)
    return unmerge(settings, lambda command: is_ours(command, harness))[1]  # "there were hooks of ours to take out"


def install_py_server_present(locs: Locations) -> bool:
    import json

    from ...wiring.mcp import SERVER, claude_json, is_our_server

    try:
        config = json.loads(claude_json(locs).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    servers = config.get("mcpServers") if isinstance(config, dict) else None
    return isinstance(servers, dict) and is_our_server(servers.get(SERVER))


def _ready(plugin: Plugin, env: dict[str, str], wait: float) -> bool:
    """Whether the venv can serve now, starting the setup (in the background) when it is missing or stale."""
    if plugin.usable() and plugin.current():
        return True
    if _retry_in(plugin) <= 0 and not _setup_running(plugin):
        start_setup(plugin, env)
    if plugin.usable():
        return True  # stale (the plugin was updated): the old venv serves while the new one is made
    import time

    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if plugin.usable():
            return True
    return False


def _not_ready(plugin: Plugin) -> str:
    wait = _retry_in(plugin)
    if wait > 0:
        return (f"HarnessLink: the private environment {plugin.venv} could not be made (why: {plugin.log}); "
                f"the next try is in {wait // 60 + 1} min (remove {plugin.failed} to try at the next call)")
    return (f"HarnessLink: first run, making the private environment in {plugin.venv} in the background "
            f"(progress in {plugin.log}); memory starts once it is ready")


def _failures(plugin: Plugin) -> tuple[int, float]:
    """(setups failed in a row, when the last one failed); (0, 0.0) when the last one did not, or when
    the record is anything but a regular file (never opened: a FIFO there would hold the hook)."""
    from ...safefile import open_regular

    fd = open_regular(plugin.failed)
    if fd is None:
        return 0, 0.0
    try:
        count = os.read(fd, 16).decode("ascii", "replace").strip()
        return (int(count) if count.isdigit() else 1), os.fstat(fd).st_mtime
    except OSError:
        return 0, 0.0
    finally:
        os.close(fd)


def _retry_in(plugin: Plugin) -> int:
    """Seconds until a failed setup may be tried again (0 or less: now)."""
    import time

    count, when = _failures(plugin)
    if not count:
        return 0
    return int(when + RETRY_AFTER[min(count, len(RETRY_AFTER)) - 1] - time.time())


def start_setup(plugin: Plugin, env: dict[str, str]) -> None:
    import subprocess

    os.makedirs(plugin.data, exist_ok=True)
    with open(plugin.log, "ab") as log:
        subprocess.Popen([sys.executable, "-I", os.path.join(plugin.root, "launch.py"), *plugin.words, "setup"],
                         stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, env=env, cwd=plugin.data,
                         start_new_session=True)  # detached: the hook returns, the setup goes on


def _setup_running(plugin: Plugin) -> bool:
    import fcntl

    try:
        with open(plugin.lock, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    return False


def setup(plugin: Plugin, env: dict[str, str]) -> int:
    """Make (or refresh) the venv, once at a time; then autobank and the first backfill, as install.py does."""
    import fcntl
    import subprocess
    import time
    from pathlib import Path

    from ...errors import EnvironmentFailed
    from ...wiring import environment
    from ...wiring.files import atomic_write

    os.makedirs(plugin.data, exist_ok=True)
    with open(plugin.lock, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another setup is at it
        if plugin.usable() and plugin.current():
            return 0
        first = not plugin.usable()
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} HarnessLink plugin {__version__}: making {plugin.venv} "
              f"from {plugin.root}", flush=True)
        try:
            with environment.package_source(Path(plugin.source)) as source:
                built = environment.build_venv(Path(plugin.venv), source)
        except EnvironmentFailed as e:
            count = _failures(plugin)[0] + 1
            atomic_write(Path(plugin.failed), f"{count}\n".encode())
            print(f"failed ({count} in a row): {e}\n{e.hint}", flush=True)
            return 1
        if first:
            launcher = [os.path.join(plugin.root, "launch.py"), *plugin.words, "first-run"]
            finished = subprocess.run([str(built.python), "-I", *launcher],
                                      env=env, capture_output=True, text=True)
            print(finished.stdout + finished.stderr, end="", flush=True)
        Path(plugin.venv, STAMP).write_text(plugin.stamp(), encoding="utf-8")
        Path(plugin.failed).unlink(missing_ok=True)
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} ready", flush=True)
    return 0


def first_run(plugin: Plugin, locs: Locations, env: dict[str, str]) -> int:
    """Inside the new venv (its dependencies at hand): what install.py does once the hooks are wired."""
    from pathlib import Path

    from ...wiring import environment, installer

    built = environment.Environment(Path(plugin.venv), Path(plugin.exe("python")))
    print(installer.turn_on_autobank(built, [plugin.harness], env), flush=True)
    print(installer.start_backfill(locs, built, env), flush=True)
    return 0


def _say(text: str) -> None:
    print(text, file=sys.stderr)
