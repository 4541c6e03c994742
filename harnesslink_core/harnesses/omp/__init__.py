"""omp: reader.py (sessions), sessions.py (listing, resume), wiring.py (the extension), each the pi family's
(pi_family/) at omp's folders. Nothing is imported here."""
