"""Option types the verbs share: numbers within the range a verb can use, refused with a clear
message otherwise (argparse prints it as `error: argument -k: …`), never an overflow deep inside."""

from __future__ import annotations

import argparse
import math


def whole_number(low: int, high: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range: use {low} to {high:,}")
        return value
    return parse


def number(low: float, high: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is out of range: use {low:g} to {high:,g}")
        return value
    return parse
