"""Wiring the hooks into each harness's own settings, and taking them out again.

What the harnesses share: each harness's own wiring is its folder's `harnesses/<id>/wiring.py`,
behind the small `Wiring` interface of `base.py` (`wirings()`: every one the registry wires); `files.py`
plans and applies every change (atomic writes, one backup, refusals with a hint); `installer.py` and
`uninstaller.py` are the commands behind the repository's install.py and uninstall.py. Only the standard library is used here: install.py runs before
the private environment with our dependencies exists.
"""
