"""Codex CLI: reader.py (rollouts), sessions.py (listing, resume), wiring.py (hooks.json, config.toml), plugin.py
(the plugin's launcher, run by Codex). Nothing is imported here: a hook that needs one of them pays for no other."""
