"""JSON for the hooks' stdin and stdout, through the C accelerator alone.

`import json` also imports `re` and, through it, `enum`: together about half of a
bare interpreter's start, paid on every prompt for reading one small object. The
C scanner and string encoder that `json` itself uses do the same work without
them. Anything other than plain JSON values is refused (ValueError), as by `json`.
"""

from __future__ import annotations

try:
    from _json import encode_basestring, make_scanner
except ImportError:  # not CPython: the ordinary module
    from json import dumps as _dumps
    from json import loads as _loads

    def loads(text: str):
        return _loads(text)

    def dumps(value) -> str:
        return _dumps(value, ensure_ascii=False)

else:

    def _constant(name: str):
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]

    class _Context:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = staticmethod(_constant)
        memo: dict = {}

    _scan = make_scanner(_Context())  # type: ignore[arg-type]  # the decoder's fields, without importing json

    def loads(text: str):
        """One JSON value; ValueError for anything else (trailing data included)."""
        text = text.strip(" \t\r\n")
        try:
            value, end = _scan(text, 0)
        except StopIteration:
            raise ValueError("not JSON") from None
        if end != len(text):
            raise ValueError("extra data after the JSON value")
        return value

    def dumps(value) -> str:
        """Compact JSON of dicts, lists, strings, numbers, booleans and None (non-ASCII kept)."""
        if isinstance(value, str):
            return encode_basestring(value)
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, (int, float)):
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError("not a JSON number")
            return repr(value) if isinstance(value, float) else str(int(value))
        if isinstance(value, dict):
            return "{" + ",".join(f"{encode_basestring(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            return "[" + ",".join(dumps(v) for v in value) + "]"
        raise ValueError(f"not JSON-serialisable: {type(value).__name__}")


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (the prompt hook's path)
if TYPE_CHECKING:
    from typing import Any


def without_lone_surrogates(value: Any) -> Any:
    """`value` with every unpaired UTF-16 surrogate in its strings (keys too) turned into U+FFFD.
    JSON may carry `"\\ud83d"` alone (a client or a harness that cut an emoji in half): Python's
    parser accepts it, but such a string cannot be encoded, written or hashed as UTF-8."""
    if isinstance(value, str):
        if value.isascii():
            return value
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_lone_surrogates(v) for v in value]
    return value


def may_hold_surrogates(data: bytes) -> bool:
    """Whether JSON text could decode to a lone surrogate (a `\\uD800`-`\\uDFFF` escape)."""
    lower = data.lower()
    return b"\\ud" in lower and any(b"\\ud" + digit in lower for digit in (b"8", b"9", b"a", b"b", b"c", b"d", b"e", b"f"))


# --- small caches in the agent dir: a JSON object made for a stamp (a file's mtime and size, say) -------------

CACHE_BYTES = 4 * 1024 * 1024


def read_cache(path: str, stamp: object) -> dict | None:
    """The object cached at `path` when it was made for this `stamp`, else None (so is anything at `path`
    that is not a regular file of at most CACHE_BYTES)."""
    from .safefile import read_regular

    raw = read_regular(path, CACHE_BYTES + 1)
    if raw is None or len(raw) > CACHE_BYTES:
        return None
    try:
        data = loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError included
        return None
    return data if isinstance(data, dict) and data.get("stamp") == stamp else None


def write_cache(path: str, stamp: object, value: dict) -> None:
    """Replace the cache at `path` whole; one that cannot be written is simply not kept."""
    import os

    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(dumps({**value, "stamp": stamp}))
        os.replace(tmp, path)
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass
