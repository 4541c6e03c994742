"""The memory tree and the ledger: what is on disk, in the formats of SPEC §2, §3 and §5.

`scope` (project slugs, linked projects), `entries` (reading a bank entry), `bank`
(the entry format: rendering one, its name), `durable` (writing one so it stays: staging, syncing),
`commit` (the one way an entry is committed: reserve, write, mark, history), `lock` (the pass lock
every writer holds), `projectfiles` (MAIN.md's index block, day summaries),
`state` (session state files), `ledger` (the SQLite ledger: transcripts read, turns
banked, tombstones), `injected` (the ledger's one table the prompt hook reads and writes,
what each session was given: apart from ledger.py, whose dataclasses and typing cost more
than the prompt hook's whole search), `main_md` (MAIN.md's markers). Imports only the
foundations.
"""
