"""What the verbs' parsers share: the parser, which takes an id as printed, and option types, numbers
within the range a verb can use, refused with a clear message otherwise (argparse prints it as
`error: argument -k: …`), never an overflow deep inside."""

from __future__ import annotations

import argparse


class Parser(argparse.ArgumentParser):
    """argparse's parser, taking a word that starts with `--` as a value when it is a project's slug
    (`--home-me-app--`) or an id under one (`--home-me-app--/bank/<file>.md`), as every verb prints them:
    `history --entry <id>`, `forget <id>`, `supersede <old> <new>`, `--project <slug>` need no `--`
    before them. An option's own name (`--project`, `--entry=<id>`) is still an option."""

    def _parse_optional(self, arg_string):
        if names_a_project(arg_string) and not self._names_an_option(arg_string):
            return None  # a value, in argparse's words
        return super()._parse_optional(arg_string)

    def _names_an_option(self, arg_string: str) -> bool:
        name = arg_string.split("=", 1)[0]
        return any(option.startswith(name) for option in self._option_string_actions)  # abbreviations too


def names_a_project(word: str) -> bool:
    """A slug as `store.scope.project_slug` makes them (`--<folder's path>--`), or a path under one."""
    slug = word.split("/", 1)[0]
    return len(slug) > 4 and slug.startswith("--") and slug.endswith("--") and slug.strip("-") != ""


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
