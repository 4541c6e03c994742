"""What pi and omp share (omp is a fork of pi): the session reader (reader.py), the sessions' listing and
estimate (sessions.py), the extension and its wiring (wiring.py, extension.ts). Not a harness: it has no id."""
