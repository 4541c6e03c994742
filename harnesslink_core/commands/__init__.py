"""One module per CLI verb: each has `add_parser(subparsers)` and `run(args, locs) -> int`."""
