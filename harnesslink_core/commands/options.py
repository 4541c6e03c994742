"""Option types the verbs share: numbers within the range a verb can use, refused with a clear
message otherwise (argparse prints it as `error: argument -k: …`), never an overflow deep inside."""

from __future__ import annotations

import argparse


def whole_number(low: int, high: int):
    return _ranged("a whole number", int, low, high)


def number(low: float, high: float):
    return _ranged("a number", float, low, high)


def _ranged(kind: str, convert, low: float, high: float):
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not low <= value <= high:  # also refuses nan and inf, and never converts a huge int to float
            raise argparse.ArgumentTypeError(f"{text} is out of range: use {low:,g} to {high:,g}")
        return value
    return parse
