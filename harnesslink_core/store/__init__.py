"""The memory tree and the ledger: what is on disk, in the formats of SPEC §2, §3 and §5.

`scope` (project slugs, linked projects), `entries` (reading a bank entry), `bank`
(rendering and writing one), `projectfiles` (MAIN.md's index block, day summaries),
`state` (session state files), `ledger` (the SQLite ledger: transcripts read, turns
banked, tombstones). Imports only the foundations.
"""
