"""MAIN.md's markers (SPEC §5 "MAIN.md"): above them, the human's notes; between them, the index of
the bank that `projectfiles.rebuild_main` writes. Apart from projectfiles so the session-start brief
reads them without its imports."""

START = "<!-- superpi:index:start -->"
END = "<!-- superpi:index:end -->"
