"""The Codex plugin's launcher (plugins/harnesslink/launch.py `codex ...`): hooks and memory tools without install.py.

`codex plugin marketplace add <checkout or git>` and `codex plugin add harnesslink@harnesslink` wire nothing in
the user's files: .codex-plugin/plugin.json names the four hooks (hooks/codex.json) and the MCP server, each a
call of launch.py with `codex` first, which comes here. It works as the Claude Code plugin does
(claude_code/plugin.py: a private venv made in the background by the first call, a hook that waits no longer than
its timeout allows, install.py's wiring wins), with what Codex does differently:

- Codex copies the plugin into its cache without the links to the package, so launch.py finds the package in
  the venv once it is made, and before that (and for every setup) in the marketplace's own folder;
- Codex keeps a plugin's data folder after `codex plugin remove`, so the venv is ours, in the agent dir
  (`<agent dir>/codex-plugin`): nothing of ours is left in ~/.codex once the plugin and the marketplace are
  removed. `harnesslink doctor` names a venv left without its plugin, with the command that removes it;
- Codex runs a plugin's hooks only once the user trusted them in `/hooks` (each by a hash of its entry), and
  install.py's wiring is hooks.json plus a marked block in config.toml.
"""

from __future__ import annotations

import os
import sys

from ...paths import Locations, locations
from ..claude_code.plugin import Plugin, dispatch, holds_our_hooks

HARNESS = "codex"
PLUGIN_ID = "harnesslink@harnesslink"  # <plugin>@<marketplace>, as marketplace.json names both


def codex_home(locs: Locations) -> str:
    # harnesses.codex.home, spelled out: that module needs the venv's dependencies
    return locs.env_folder("CODEX_HOME", os.path.join(locs.home_path, ".codex"))


def data_folder(locs: Locations) -> str:
    return os.path.join(locs.agent_path, "codex-plugin")


def plugin_for(locs: Locations, root: str) -> Plugin:
    plugin = Plugin(root, data_folder(locs), HARNESS, ("codex",))
    # the folder holding the package this call runs (a marketplace's checkout, or the venv's site-packages):
    # four up from harnesslink_core/harnesses/codex/plugin.py
    folder = os.path.realpath(__file__)
    for _ in range(4):
        folder = os.path.dirname(folder)
    plugin.source = folder
    return plugin


def main(argv: list[str] | None = None, env: dict[str, str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ if env is None else env)
    root = env.get("PLUGIN_ROOT")
    if not root:
        print("HarnessLink plugin: PLUGIN_ROOT is not set; Codex runs this, not you", file=sys.stderr)
        return 0
    return dispatch(plugin_for(locations(env), root), words, env, install_py_hooks_present, install_py_server_present)


def install_py_hooks_present(locs: Locations) -> bool:
    return holds_our_hooks(os.path.join(codex_home(locs), "hooks.json"), HARNESS)


def install_py_server_present(locs: Locations) -> bool:
    from ...safefile import read_regular_text
    from ...wiring.mcp import BLOCK_START

    text = read_regular_text(os.path.join(codex_home(locs), "config.toml"), 8 << 20)
    return text is not None and BLOCK_START in text
