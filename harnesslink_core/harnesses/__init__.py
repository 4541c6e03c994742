"""One module per harness behind the `Harness` protocol of `base.py`; the registry is `registry.py`."""
