"""HarnessLink hooks: one shared, durable memory for coding agents.

The layout follows the flow of the SPEC, one layer a folder, bottom first; a
layer imports only from the layers below it (tests/test_layers.py holds that):

- foundations, the modules at this level: `paths`, `clock`, `log`, `errors`,
  `config`, `redact` (its parts in `redaction/`: rules, gates, engine),
  `wirejson`, `fastsqlite`, `model` (what a harness read), `atomic` (replacing a
  file whole), `safefile` (reading one that may be hostile);
- `harnesses/`: one folder per harness, `harnesses/<id>/`, and the registry of them (SPEC §4): its reader is
  in this layer, its `sessions.py` in the sessions layer and its `wiring.py` and `plugin.py` among the
  surfaces, each module in the layer its role names;
- `store/`: the memory tree and the ledger, the formats on disk (SPEC §2, §3, §5);
- `recall/`: the search index and what reads memory back, the brief and the
  prompt's matches (SPEC §6);
- `control/`: what the user takes back or keeps out (forget, exclusion; SPEC §10);
- `banking/`: the autobank pass that settles turns and banks each once (SPEC §4, §5);
- `sessions/`: resuming and handing over across harnesses (SPEC §10);
- the surfaces at the top: `hooks.py`, `mcp_server.py` + `memory_tools.py`,
  `commands/` (one module per CLI verb), `wiring/` (install), `main.py`.

Nothing is imported here: the prompt hook must stay cheap to start.
"""

__version__ = "0.1.0"

# harnesses/registry.py's IDS and WIRED, spelled out for the modules that may not import it: the hooks (their
# allow-list), the memory server's start-up and config.py (a foundation). tests/harnesses/test_one_registry.py
# holds them to the registry.
HARNESS_IDS = ("claude-code", "codex", "pi", "omp", "antigravity")
WIRED_HARNESS_IDS = ("claude-code", "codex", "pi", "omp")
