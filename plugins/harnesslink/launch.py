#!/usr/bin/env python3
"""HarnessLink's plugin for Claude Code and Codex: every hook and the memory server start here
(.claude-plugin/plugin.json; .codex-plugin/plugin.json calls it with `codex` first).

It runs with the `python3` on PATH; harnesslink_core/harnesses/claude_code/plugin.py and codex/plugin.py say what it does.
Codex copies the plugin without its links, so there the package comes from the private venv once it is made,
or from the marketplace the plugin was added from (harnesslink_core/harnesses/codex/plugin.py, `package_folders`)."""

import os
import sys

if sys.version_info < (3, 11):
    sys.stderr.write("HarnessLink needs Python 3.11 or newer as `python3`; its plugin does nothing until then\n")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))  # -I leaves the script's folder off sys.path
WORDS = sys.argv[1:]
if WORDS[:1] == ["codex"]:
    os.environ.setdefault("PLUGIN_ROOT", HERE)  # Codex names it to hooks, not to the MCP server (its cwd)


def codex_package_folders():
    """Where the package is for Codex's copy of the plugin: the venv's (not for a setup, which must build
    the version this copy is), then the marketplaces' folders named in $CODEX_HOME/config.toml."""
    agent = os.path.expanduser(os.environ.get("HARNESSLINK_HOME") or os.path.join("~", ".superpi", "agent"))
    lib = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    if WORDS[1:2] != ["setup"]:
        yield os.path.join(agent, "codex-plugin", "venv", "lib", lib, "site-packages")
    codex_home = os.path.expanduser(os.environ.get("CODEX_HOME") or os.path.join("~", ".codex"))
    try:
        import tomllib

        with open(os.path.join(codex_home, "config.toml"), "rb") as f:
            marketplaces = tomllib.load(f).get("marketplaces")
    except (OSError, ValueError):
        return
    for name, market in (marketplaces if isinstance(marketplaces, dict) else {}).items():
        local = isinstance(market, dict) and market.get("source_type") == "local" and market.get("source")
        root = local if isinstance(local, str) else os.path.join(codex_home, ".tmp", "marketplaces", name)
        yield os.path.join(root, "plugins", "harnesslink")


if not os.path.isdir(os.path.join(HERE, "harnesslink_core")) and WORDS[:1] == ["codex"]:
    for folder in codex_package_folders():
        if os.path.isfile(os.path.join(folder, "harnesslink_core", "harnesses", "codex", "plugin.py")):
            HERE = folder
            break
sys.path.insert(0, HERE)

try:
    if WORDS[:1] == ["codex"]:
        from harnesslink_core.harnesses.codex.plugin import main

        WORDS = WORDS[1:]
    else:
        from harnesslink_core.harnesses.claude_code.plugin import main
except ImportError as e:  # a hook must not fail the session: it says why and does nothing
    sys.stderr.write(f"HarnessLink plugin: its package is not where it looked ({e}); add the marketplace again\n")
    sys.exit(0)

if __name__ == "__main__":
    raise SystemExit(main(WORDS))
