"""Claude Code: reader.py (transcripts), sessions.py (listing, resume), wiring.py (settings.json), plugin.py
(the plugin's launcher). Nothing is imported here: a hook that needs one of them pays for no other."""
