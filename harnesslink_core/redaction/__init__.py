"""Redaction's parts behind `harnesslink_core.redact`: the rules, the gates, the engine (see redact.py)."""
