"""One folder per harness (`<id>/`: reader.py, sessions.py, wiring.py, plugin.py where it ships as one), the
reader behind the `Harness` protocol of `base.py`; the registry of them all is `registry.py`. Nothing is imported
here: the hooks may load a reader, never wiring."""
