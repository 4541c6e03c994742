"""HarnessLink hooks: one shared, durable memory for coding agents.

The flow reads top-down: harness readers turn transcripts into Turns
(`harnesses/`), the autobank pass settles them and writes bank entries
exactly once (`autobank.py`, `ledger.py`, `bank.py`), the search index
and brief read the tree back (`index.py`, `brief.py`, `matches.py`) and
the hooks answer each harness (`hooks.py`).

Nothing is imported here: the prompt hook must stay cheap to start.
"""

__version__ = "0.1.0"
