"""The memory tree and the ledger: what is on disk, in the formats of SPEC §2, §3 and §5.

`scope` (project slugs, linked projects), `entries` (reading a bank entry), `bank`
(rendering and writing one), `projectfiles` (MAIN.md's index block, day summaries),
`state` (session state files), `ledger` (the SQLite ledger: transcripts read, turns
banked, tombstones), `injected` (the ledger's one table the prompt hook reads and writes,
what each session was given: apart from ledger.py, whose dataclasses and typing cost more
than the prompt hook's whole search), `main_md` (MAIN.md's markers). Imports only the
foundations.
"""
