"""The write path (SPEC §4, §5): the autobank pass reads new transcript bytes, settles
turns and banks each exactly once (`autobank`, which runs its stages: `plan` → `read` →
`settle` → `commit` → `finish`, sharing `pass_state`); `readahead` reads a backfill's new
transcripts in a child; `background` decides when a hook starts a pass in the background.
Imports every layer below but `sessions`.
"""
