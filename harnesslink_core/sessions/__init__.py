"""Resuming and handing over (SPEC §10): a project's sessions across harnesses and
what resuming each would replay (`base`; each harness's own is its folder's
`harnesses/<id>/sessions.py`), and one-shot handoffs to another harness (`handoff`,
read on session start; `handoff_build`, which writes them). Imports every layer below the surfaces.
"""
