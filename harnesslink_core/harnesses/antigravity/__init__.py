"""Google Antigravity: reader.py only; it is read, never wired (no hooks, no tools, no session to resume)."""
