"""Nothing secret or private is written anywhere we persist: the bank, the ledger (read
positions' carried session facts, session state, error rows), state files, logs and the CLI's
error lines all pass through `redact` (or `redact_value` for JSON-able data) first.

- `<private>…</private>` spans (attributes allowed: `<private reason="x">`) become `[private]`; an
  unclosed tag hides everything to the end of the text it is in (a prompt, one tool input, an answer).
- Secrets are replaced by `[redacted:<kind>]`: the whole token, or, where a rule names the secret part
  (an assignment, a URL's password, a header), that part only, so `DB_PASS=x` keeps `DB_PASS=`.

Two rule sets, tried in order: ours (below), and gitleaks' maintained rules, vendored as data in
`data/secrets/` (converted by `scripts/update_secret_rules.py`; see SOURCE.md there). A rule runs only
when one of its keywords is in the lower-cased text, as gitleaks does; the vendored ones are read and
compiled on first use, each only once its keyword is seen. Every expression is written (or converted)
for a backtracking engine: no nested quantifiers over overlapping classes, every repetition bounded,
so a text costs time in proportion to its length (tests/test_redact.py holds 1 MB of hostile input to
50 ms).

A text longer than `_LONG` skips each rule it cannot hold by what every match needs (`Rule.needs`: an `@`
for a URL password, an operator for an assignment; a boundary rule needs a non-word character, or runs at
the start only), tries a rule only where one of its literal starts is (`Rule.starts`, `_windowed`), and
looks for a rule's keywords only once it matches. The places of every rule's starts are found in one pass
(an Aho-Corasick automaton, `_find_all`: a `find` per start cost ~0.5 ms per MB, ~220 of them) over a copy
lower-cased character for character (`_folded`, so non-ASCII text takes this path too), and moved along by
each replacement (`_moved`) rather than found again. One rule replaces at most `_MAX_REPLACED` secrets one
by one; the rest of their region becomes one label (`_replace`). A rule with no literal start is windowed
around a string each match holds near its start (`_KNOWN_INSIDE`, `_matches_near`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"
# Where a token starts: not after a letter or digit, but after a JSON escape (`\n`) too.
_B = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
_B1 = r"(?:(?<![A-Za-z0-9_][\s\S])|(?<=\\[nrt][\s\S]))"  # `_B`, written after the first character
_TOK = r"[A-Za-z0-9_+/=.-]"

# What may follow a secret word for it to end a name that is assigned: a closing quote (maybe
# JSON-escaped), spaces, an operator. Then the value: quoted (the whole of it, spaces too) or bare.
_OP = r"(?:\\{0,3}[\"'])?[ \t]{0,8}(?:=>|:=|\?=|=(?!=)|:(?![:/]))[ \t]{0,8}"
_VALUE = (
    r"(?:(?P<q>\\{0,3}\")(?!\[redacted:)(?P<v>(?:[^\"\\\r\n]|\\[\\/bfnrtu]){3,256}+)(?:\\{0,3}\")?"
    r"|(?P<q1>\\{0,3}')(?!\[redacted:)(?P<v1>[^'\\\r\n]{3,256}+)(?:\\{0,3}')?"
    r"|(?!(?:true|false|null|none|nil|undefined|True|False|None|NULL)(?![^\s\"'`,;(){}\[\]<>\\]))"
    r"(?!\$[A-Za-z_{(])(?![A-Za-z_][A-Za-z0-9_]{0,64}(?:\.[A-Za-z_][A-Za-z0-9_]{0,64}){1,8}(?![^\s\"'`,;(){}\[\]<>\\]))"
    r"(?P<v2>[^\s\"'`,;(){}\[\]<>\\]{4,256}+)(?![(\[]))"
)
# `key`, `auth`, `pwd` and `pass` never name a secret alone (`key = 3`, `PWD=/home/me`): they need a part before.
_SECRET_WORDS = "(?i:password|passwd|passphrase|token|secret|credentials?)|(?<=[A-Za-z0-9_.\\-])(?i:pass|pwd|key|auth)"


def _first_letter_split(glued: tuple[str, ...], bare: tuple[str, ...]) -> str:
    """`_SECRET_WORDS` with every alternative starting with one plain character (each case `(?i:)` matches,
    the Kelvin sign and long s too), so `re` skips positions that cannot start a word without trying them."""
    variants = {"p": "Pp", "t": "Tt", "s": "Ss\u017f", "c": "Cc", "k": "Kk\u212a", "a": "Aa"}
    alts = []
    for first in dict.fromkeys(w[0] for w in glued + bare):
        rests = [w[1:] for w in glued if w[0] == first]
        after = [w[1:] for w in bare if w[0] == first]
        for ch in variants[first]:
            if rests:
                alts.append(ch + "(?i:" + "|".join(rests) + ")")
            if after:  # the lookbehind of the original, one character later (past `ch`)
                alts.append(ch + "(?<=[A-Za-z0-9_.\\-][\\s\\S])(?i:" + "|".join(after) + ")")
    return "|".join(alts)


_GLUED_WORDS = ("password", "passwd", "passphrase", "token", "secret", "credentials", "credential")
_BARE_WORDS = ("pass", "pwd", "key", "auth")
_SECRET_WORDS_FAST = _first_letter_split(_GLUED_WORDS, _BARE_WORDS)

# (kind, expression, keywords, flags). Order matters: tokens first, then gitleaks' rules, then the
# forms that name a secret by its context (`_LATE`).
_EARLY: list[tuple[str, str, tuple[str, ...]]] = [
    # also as JSON escapes (`\u200b`), so a token split by one is whole again for the rules below
    ("zero-width", r"(?<=[A-Za-z0-9_+/=.-])(?:[\u200b\u200c\u200d\u2060\ufeff]|\\u(?i:200[bcd]|2060|feff)){1,16}"
                   r"(?=[A-Za-z0-9_+/=.-])", tuple(ZERO_WIDTH) + ("\\u200b", "\\u200c", "\\u200d", "\\u2060", "\\ufeff")),
    ("private-key", r"-----BEGIN[ A-Z0-9]{0,64}PRIVATE KEY(?: BLOCK)?-----(?:(?!-----END)[A-Za-z0-9+/=\s:,.\\-]){0,65536}"
                    r"(?:-----END[ A-Z0-9]{0,64}PRIVATE KEY(?: BLOCK)?-----)?", ("private key",)),
    # Each token rule is written with its first character before the boundary (`_B1`): `re` then skips to each
    # place that character is (it cannot skip to a look-behind), where a scan of a megabyte would try them all.
    ("jwt", "e" + _B1 + r"yJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}", ("eyj",)),
    ("aws-access-key", "A" + _B1 + r"(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|PKA|3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])",
     ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa", "anva", "apka", "a3t")),
    ("github-token", "g" + _B1 + r"(?:h[pousr]_[A-Za-z0-9]{30,255}|ithub_pat_[A-Za-z0-9_]{40,255})",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("gitlab-token", "g" + _B1 + r"lpat-[A-Za-z0-9_-]{20,255}", ("glpat-",)),
    ("slack-token", "x" + _B1 + r"(?:ox[abposre]|app)-[A-Za-z0-9-]{10,255}",
     ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-")),
    ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{8,256}",
     ("hooks.slack.com",)),
    ("anthropic-key", "s" + _B1 + r"k-ant-[A-Za-z0-9_-]{20,255}", ("sk-ant-",)),
    ("openai-key", "s" + _B1 + r"k-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,255}", ("sk-",)),
    ("google-api-key", "A" + _B1 + r"Iza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", ("aiza",)),
    ("google-oauth-secret", "G" + _B1 + r"OCSPX-[A-Za-z0-9_-]{20,64}", ("gocspx-",)),
    ("stripe-key", "(?:[rs]" + _B1 + r"k_(?:live|test)_|w" + _B1 + r"hsec_)[A-Za-z0-9]{16,255}",
     ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_")),
    ("npm-token", "n" + _B1 + r"pm_[A-Za-z0-9]{30,255}", ("npm_",)),
    ("huggingface-token", "h" + _B1 + r"f_[A-Za-z0-9]{30,255}", ("hf_",)),
    ("sendgrid-key", "S" + _B1 + r"G\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{16,64}", ("sg.",)),
    ("digitalocean-token", "d" + _B1 + r"o[por]_v1_[A-Za-z0-9]{32,128}", ("_v1_",)),
    ("azure-storage-key", r"(?i:(?:Account|SharedAccess)Key)=(?P<v>[A-Za-z0-9+/]{20,128}={0,2})",
     ("accountkey=", "sharedaccesskey=")),
    # prefixed tokens whose gitleaks rules are dropped as slow (data/secrets/SOURCE.md), or that it lacks
    ("square-token", "(?:s" + _B1 + r"q0(?:atp-[A-Za-z0-9_-]{22,64}|csp-[A-Za-z0-9_-]{40,64})|E" + _B1
                     + r"AAA[A-Za-z0-9+_-]{60}(?![A-Za-z0-9+_-]))", ("sq0atp-", "sq0csp-", "eaaa")),
    ("atlassian-token", "A" + _B1 + r"TATT3[A-Za-z0-9_=-]{150,255}", ("atatt3",)),
    ("flyio-token", "f" + _B1 + r"(?:o1_[A-Za-z0-9_-]{43}|m1[ar]_[A-Za-z0-9+/]{100,4096}={0,3}"
                    r"|m2_[A-Za-z0-9+/]{100,4096}={0,3})", ("fo1_", "fm1a_", "fm1r_", "fm2_")),
    ("sourcegraph-token", "s" + _B1 + r"gp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}(?![A-Za-z0-9])", ("sgp_",)),
    ("planetscale-token", "p" + _B1 + r"scale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.-]{32,64}", ("pscale_",)),
    ("perplexity-key", "p" + _B1 + r"plx-[A-Za-z0-9]{48}(?![A-Za-z0-9])", ("pplx-",)),
    ("scalingo-token", "t" + _B1 + r"k-us-[A-Za-z0-9_-]{48}(?![A-Za-z0-9_-])", ("tk-us-",)),
    ("docker-token", "d" + _B1 + r"ckr_pat_[A-Za-z0-9_-]{20,128}", ("dckr_pat_",)),
    # the token's secret part, after its 14-character id (`.atlasv1.` first, for the same reason)
    ("terraform-token", r"\.atlasv1\.(?<=[A-Za-z0-9]{14}\.atlasv1\.)(?P<v>[A-Za-z0-9_=-]{60,70})(?![A-Za-z0-9_=-])",
     ("atlasv1",)),
    # the part after the bot's id (`:A` first)
    ("telegram-bot-token", r":A(?<=[0-9]{5}:A)(?P<v>[0-9A-Za-z_-]{34})(?![0-9A-Za-z_-])", (":a",)),
    ("discord-webhook", r"https://(?:[a-z]{1,16}\.)?discord(?:app)?\.com/api/webhooks/[0-9]{5,32}/(?P<v>[A-Za-z0-9_-]{20,256})",
     ("discord",)),
    ("url-signature", r"[?&](?i:sig|signature|x-amz-signature|x-amz-security-token|x-goog-signature)="
                      r"(?P<v>[A-Za-z0-9%+/=_.-]{16,4096}+)", ("sig=", "signature=", "security-token=")),
    ("mailgun-key", "k" + _B1 + r"ey-[0-9a-z]{32}(?![0-9A-Za-z])", ("key-",)),
    ("password-hash", r"\$" + _B1 + r"(?:2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}|apr1\$[./A-Za-z0-9]{1,8}\$[./A-Za-z0-9]{22}"
                      r"|[56]\$(?:rounds=[0-9]{1,9}\$)?[./A-Za-z0-9]{1,16}\$[./A-Za-z0-9]{43,86})",
     ("$2$", "$2a$", "$2b$", "$2x$", "$2y$", "$apr1$", "$5$", "$6$")),
]
# A password given to a command as an argument. A value is quoted (the whole of it, spaces too; a double
# quote maybe JSON-escaped) or a bare shell word; `$PASS`, `${PASS}`, `"$(cat f)"` name it, not hold it.
_NOT_VAR = r"(?!\$[A-Za-z_{(])"
_DQ = r'\\{0,3}"'
_IN_DQ = r'(?:[^"\\\r\n]|\\[\\/bfnrtu]){1,256}+'
_IN_SQ = r"[^'\r\n]{1,256}+"
_BARE = r"[^\s\"'`\\|;&<>]"


def _password_value(before: str = "", least: int = 3) -> str:
    """A password argument; `before`: what the argument holds ahead of the password (`user:` of curl's
    `user:pw`, `pass:` of openssl's `pass:pw`), inside its quotes or ahead of them."""
    alone = (f"(?:{_DQ}{_NOT_VAR}(?P<v>{_IN_DQ}){_DQ}|'(?P<v1>{_IN_SQ})'"
             f"|(?!-){_NOT_VAR}(?P<v2>{_BARE}{{{least},256}}+))")
    if before:
        alone = (f"(?:{_DQ}{before}{_NOT_VAR}(?P<v3>{_IN_DQ}){_DQ}|'{before}(?P<v4>{_IN_SQ})'"
                 f"|{before}{alone})")
    return r"(?!\[redacted:)" + alone


def _user_and(separator: str) -> str:
    """A user name, then the separator before its password (`user:pw`, `DOMAIN\\user%pw`)."""
    return "[^\\s\"'`|;&<>" + separator + "]{0,128}" + separator


# Where a command starts: at the start, after a space, a shell operator, a quote, a bracket or a path's `/`, or
# after a JSON escape.
_CMD_AFTER = "/(\"'`{[>*"
_NOT_CMD_AFTER = r"[^\s|;&" + _CMD_AFTER.replace("[", "\\[") + "]"


def _names(alternatives: str) -> list[str]:
    """`a|b(?:c|d)?|e` -> `a`, `b(?:c|d)?`, `e`."""
    out, depth, last = [], 0, 0
    for i, ch in enumerate(alternatives + "|"):
        depth += (ch == "(") - (ch == ")")
        if ch == "|" and not depth:
            out.append(alternatives[last:i])
            last = i + 1
    return out


def _literal_head(name: str) -> str:
    """The plain characters a command's name starts with (`mysql` of `mysql[a-z_]{0,12}`)."""
    n = 0
    while n < len(name) and (name[n].isalnum() or name[n] in "_-"):
        n += 1
    return name[:n - 1] if name[n:n + 1] in ("?", "*", "{") else name[:n]  # `s?` of `https?` is not plain


def _command_start(name: str) -> str:
    """A command's name with the boundary written after its plain head: `re` finds each place that head is
    with a fast search, where a look-behind (or a first character of many) is tried at every position."""
    head = _literal_head(name)
    back = r"[\s\S]{" + str(len(head)) + "}"
    return head + r"(?:(?<!" + _NOT_CMD_AFTER + back + r")|(?<=\\[nrt]" + back + "))" + name[len(head):]


def _args(head: str) -> str:
    """The arguments between a command and its password's flag, up to a shell operator or the end of a line (a
    JSON-escaped one too), and up to a place where `head` (the command, spaced) starts again: the try from there
    reads on, so each character is read by one try, not 16 arguments again from each command."""
    special = "[" + _CMD_AFTER.replace("[", "\\[") + "]"
    return (r"(?:[ \t]{1,8}+(?!" + head + r")(?:[^\s|;&\\" + _CMD_AFTER.replace("[", "\\[") + "]|(?:" + special
            + r"|\\[^\snrt])(?!" + head + r")){1,128}+){0,16}?[ \t]{1,8}")


_SPACED, _GLUED, _ANY = r"[ \t]{1,8}", r"[ \t]{0,8}", r"(?:=|[ \t]{0,8})"
_LOGIN = r"[ \t]{1,8}(?:[^\s|;&]{1,64}+[ \t]{1,8}){0,3}?login"  # `docker login`, `helm registry login`
_LOGIN_WORDS = (" login", "\tlogin")
# (commands, the flags that take their password, how a value follows its flag, its form, whether `login` comes
# first). Only these commands' flags: elsewhere `-p` is a port or a path (ssh -p 22, mkdir -p, docker run -p 80:80).
_PASSWORD_FLAGS = [
    ("sshpass|mysql[a-z_]{0,12}+|mariadb[a-z-]{0,12}+|mycli", "-p", _GLUED, _password_value(), False),
    ("docker|podman|nerdctl|buildah|skopeo|oras|finch|helm|az|oc|cf", "-p", _ANY, _password_value(), True),
    ("mongo(?:sh|dump|restore|export|import|stat|top|files)?|cqlsh|rdesktop|smbmap|hydra", "-p", _ANY,
     _password_value(), False),
    ("sqlcmd|bcp|mosquitto_(?:pub|sub|rr)|ipmitool|zip|unzip|zipcloak", "-P", _GLUED, _password_value(), False),
    ("7z[arz]?|7zz|rar|unrar", "-h?p", "", _password_value(), False),
    ("redis-cli|valkey-cli|keydb-cli", "-a", _SPACED, _password_value(), False),
    ("ldap[a-z]{2,12}+", "-w", _GLUED, _password_value(), False),
    ("ssh-keygen", "-[NP]", _GLUED, _password_value(), False),
    ("plink|pscp|psftp", "-pw", _SPACED, _password_value(), False),
    ("keytool|jarsigner", "-(?:src|dest)?(?:store|key)pass|-new", _SPACED, _password_value(), False),
    ("openssl", "-k", _SPACED, _password_value(), False),
    ("openssl", "-pass(?:in|out|word)?", _SPACED, _password_value("pass:", 1), False),
    ("curl", "-[uU]|--(?:proxy-)?user", _ANY, _password_value(_user_and(":"), 1), False),
    ("https?|xhs?", "-a|--auth", _ANY, _password_value(_user_and(":"), 1), False),
    ("lftp", "-u", _SPACED, _password_value(_user_and(","), 1), False),
    ("smbclient|rpcclient|smbcacls|smbget|smbtree|net", "-U|--user", _ANY, _password_value(_user_and("%"), 1), False),
    ("mysqladmin|mariadb-admin", "password", _SPACED, _password_value(), False),
    ("nmcli", r"password|wifi-sec\.psk", _SPACED, _password_value(), False),
    ("aws", r"(?:[A-Za-z0-9_-]{1,64}\.)?(?i:aws_secret_access_key|aws_session_token)", _SPACED, _password_value(),
     False),
]
# htpasswd's flags, read once: each letter is kept as a group when it is `n` or `b` (-b, -nb, -bcB), and a cost
# may follow (-C 10).
_HT_OPTS = r"(?:[ \t]{1,8}-(?:[A-Za-ac-mo-z]|(?P<n>n)|(?P<b>b)){1,8}+(?:[ \t]{1,8}[0-9]{1,3}+)?){1,4}+"
_HT_WORD = r"[ \t]{1,8}[^\s|;&<>-][^\s|;&<>]{0,127}+"


def _command_password(name: str, after: str, flags: str, follows: str, value: str) -> str:
    """The command `name` (then `after`: ` login`), its arguments, one of its password `flags`, then the value."""
    return (_command_start(name) + after + "(?![A-Za-z0-9_.-])" + _args(f"{name}{after}[ \t]")
            + f"(?:{flags}){follows}{value}")


def _command_keywords(name: str, login: bool) -> tuple[str, ...]:
    """What a command's rule is gated by: `login` after a space, or the command's name (followed by the space
    or tab every match has after it, when the name is a plain word: `net ` is rarer than `net`)."""
    head = _literal_head(name).lower()
    return _LOGIN_WORDS if login else (head + " ", head + "\t") if head == name else (head,)


# One rule per command, gated by its name and found by it.
_COMMAND_PASSWORDS = [
    ("cli-secret", _command_password(name, _LOGIN if login else "", flags, follows, value),
     _command_keywords(name, login))
    for names, flags, follows, value, login in _PASSWORD_FLAGS for name in _names(names)
] + [
    # htpasswd's -b takes the password from the command line, after the file and the user (only the user with -n)
    ("cli-secret", _command_start("htpasswd") + _HT_OPTS + "(?(b)|(?!))(?(n)|" + _HT_WORD + ")" + _HT_WORD + _SPACED
                   + _password_value(least=1), ("htpasswd",)),
    # Windows' net use: the password after the share, or after /user:NAME (`*` asks for it)
    ("cli-secret", "[Nn]" + _B1 + r"(?i:et)[ \t]{1,8}(?i:use)(?:[ \t]{1,8}[^\s|&/\\]{1,64}+){0,2}?[ \t]{1,8}\\{2,8}"
                   r"[^\s\\/]{1,128}+(?:\\{1,4}[^\s\\/]{1,128}+){1,4}"
                   r"(?:[ \t]{1,8}/(?i:user|u):[^\s]{1,128}+)?[ \t]{1,8}(?![/*])" + _password_value(least=1), ("net ", "net\t")),
] + [
    # sqlplus user/pw@db, and Oracle's other tools
    ("cli-secret", _command_start(name) + r"(?![A-Za-z0-9_.-])(?:[ \t]{1,8}[^\s|;&/]{1,64}){0,4}?[ \t=]{1,8}[\"']?"
                   r"[A-Za-z][A-Za-z0-9_$#]{0,127}/(?!\[redacted:)" + _NOT_VAR + r"(?P<v2>[^\s/@\"'`\\|;&<>]{1,256}+)",
     tuple(name + after for after in " \t="))
    for name in ("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl")
]
_LATE: list[tuple[str, str, tuple[str, ...]]] = [
    # `_B` one character later, so a scan skips to each B (`re` cannot skip to a look-behind or a (?i) letter)
    ("bearer-token", r"[Bb]" + _B1 + r"(?i:earer)[ \t]{1,8}(?=[A-Za-z]{0,4096}+[0-9._~+/=-])(?P<v>[A-Za-z0-9._~+/=-]{12,4096}+)",
     ("bearer",)),
    ("basic-auth", r"(?i:authorization)[ \t]{0,8}(?:\\{0,3}[\"'])?[ \t]{0,8}[:=][ \t]{0,8}(?:\\{0,3}[\"'])?[ \t]{0,8}"
                   r"(?i:basic)[ \t]{1,8}(?P<v>[A-Za-z0-9+/]{4,4096}+={0,2})", ("basic",)),
    ("auth-header", r"(?i:authorization)[ \t]{0,8}(?:\\{0,3}[\"'])?[ \t]{0,8}[:=][ \t]{0,8}(?:\\{0,3}[\"'])?[ \t]{0,8}"
                    r"(?:(?i:token|apikey|api-key|key)[ \t]{1,8})?(?=[A-Za-z]{0,4096}+[0-9._~+/=-])"
                    r"(?P<v>[A-Za-z0-9._~+/=-]{12,4096}+)", ("authorization",)),
    ("cookie", _B + r"(?i:(?:set-)?cookie)[ \t]{0,8}:[ \t]{0,8}(?P<v>[A-Za-z0-9_.!#$%&*+^`|~-]{1,128}=[^\r\n\"'\\]{1,4096}+)",
     ("cookie",)),
    ("aws-secret-key", r"(?i:aws_?secret_?access_?key)(?:\\{0,3}[\"'])?[ \t]{0,8}[:=][ \t]{0,8}(?:\\{0,3}[\"'])?"
                       r"(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", ("secret",)),
    ("url-password",
     _B + r"[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\s:/@\"'<>\\]{0,256}+:(?![0-9]{1,5}/)"
          r"(?P<v>(?:(?:[^\s@\"'<>\\:]|:(?!//)){0,256}+@){0,8}(?:[^\s@\"'<>\\:]|:(?!//)){1,256}+)@(?=[A-Za-z0-9\[_%])",
     ("://",)),
    # a long flag whose name ends in a secret word (`--password`, `--http-password`, `--hf-token`), bar the
    # flags that only ask for one (`--ask-pass`, `--no-password`)
    ("cli-secret", r"--(?!(?i:no|ask|prompt|show|generate|random|reset|require|skip|use)-)(?:(?:[A-Za-z0-9]{1,24}+-){0,3}+"
                   r"(?i:password|passwd|passphrase|token|secret)|(?i:pass|api-?key))(?:=|[ \t]{1,8})" + _password_value(),
     ("-password", "-passwd", "-passphrase", "-token", "-secret", "--pass", "--api")),
    *_COMMAND_PASSWORDS,
    ("netrc-password", r"(?:machine|login|default)(?<![A-Za-z0-9_]machine)(?<![A-Za-z0-9_]login)(?<![A-Za-z0-9_]default)(?:[ \t]{1,8}[^\s\\]{1,256}+)?"
                       r"(?:(?:[ \t]|\r?\n|\\[rn]){1,16}+(?:login|account|port|machine|macdef)[ \t]{1,8}[^\s\\]{1,256}+){0,3}"
                       r"(?:[ \t]|\r?\n|\\[rn]){1,16}+password[ \t]{1,8}(?P<v>[^\s\\\"']{1,256}+)", ("password",)),
    ("secret-assignment", r"(?P<w>" + _SECRET_WORDS_FAST + r")" + _OP + _VALUE,
     ("pass", "pwd", "token", "secret", "credential", "key", "auth")),
]

# A name ends in a secret word when the word is its last part: after `_ . -`, a camelCase step, or the
# start of the name. Glued to what comes before only for these (`PGPASSWORD`, `clientsecret`).
_GLUED_OK = {"password", "passwd", "passphrase", "token", "secret", "credential", "credentials"}
_NEVER_BARE = {"key", "auth", "pwd", "pass"}
_GLUED_KEY = ("api", "secret", "access", "private", "master", "auth", "signing", "encryption", "account", "license")
# Names ending in KEY that are not secrets.
_NOT_SECRET_KEYS = ("partition", "sort", "primary", "foreign", "cache", "routing", "object", "public", "hash",
                    "range", "lookup", "group", "index", "shortcut", "hot", "map", "dict", "idempotency", "dedup",
                    "sequence", "schema", "natural", "bucket", "idx", "row", "column", "composite", "unique",
                    "translation", "i18n", "sorting", "cluster", "shard", "search", "s3", "file")


class Rule:
    __slots__ = ("kind", "source", "keywords", "group", "entropy", "allow", "_compiled", "_needs", "_width", "_starts",
                 "_inside", "_scans_fast", "_heads")

    def __init__(self, kind: str, source: str, keywords: tuple[str, ...], group: int = 0, entropy: float = 0.0,
                 allow: tuple = ()) -> None:
        self.kind, self.source, self.keywords = kind, source, keywords
        self.group, self.entropy, self.allow = group, entropy, allow
        self._compiled: re.Pattern[str] | None = None
        self._needs: tuple[tuple[frozenset[str], bool], ...] | None = None
        self._width = -1
        self._starts: tuple[str, ...] | None | bool = False
        self._inside: tuple[tuple[str, ...], int, int] | None | bool = False
        self._scans_fast: bool | None = None
        self._heads: dict[str, re.Pattern[str]] | None | bool = False

    @property
    def starts(self) -> tuple[str, ...] | None:
        """Lower-cased strings one of which every match starts with (None: not known), for `_windowed`."""
        if self._starts is False:
            self._starts = _KNOWN_STARTS.get(self.source) or _starts(self.source)
        return self._starts  # type: ignore[return-value]

    @property
    def inside(self) -> tuple[tuple[str, ...], int, int] | None:
        """(strings, lead, reach): every match holds one of the (lower-cased) strings at most `lead` characters
        past its start, and the engine reads at most `reach` characters past it (None: not known)."""
        if self._inside is False:
            known = _KNOWN_INSIDE.get(self.source)
            if known is not None:
                from re import _parser  # type: ignore[attr-defined]

                self._inside = (*known, _reach(_parser.parse(self.source)))
            elif self.starts is not None:
                self._inside = (self.starts, 0, 0)
            else:
                self._inside = None
        return self._inside  # type: ignore[return-value]

    @property
    def heads(self) -> dict[str, re.Pattern[str]] | None:
        """`_KNOWN_HEADS`, compiled, by the start each is led by (None: not known)."""
        if self._heads is False:
            known = _KNOWN_HEADS.get(self.source)
            self._heads = None if known is None else {head: re.compile(head + rest) for head, rest in known.items()}
        return self._heads  # type: ignore[return-value]

    @property
    def scans_fast(self) -> bool:
        """Whether its expression starts with a character or a set of them (or alternatives that each start
        with a character), case kept: `re` then skips to each place one is (a megabyte in 0.5-4 ms, against
        5-30 ms for one that starts with a look-behind)."""
        if self._scans_fast is None:
            from re import _parser  # type: ignore[attr-defined]

            parsed = _parser.parse(self.source)
            first = str(parsed[0][0]) if len(parsed.data) else ""
            if first == "SUBPATTERN" and not parsed[0][1][1]:  # a group that sets no flag: its first item
                parsed = parsed[0][1][3]
                first = str(parsed[0][0]) if len(parsed.data) else ""
            if first == "BRANCH":
                first = "LITERAL" if all(alt.data and str(alt[0][0]) == "LITERAL" for alt in parsed[0][1][1]) else ""
            self._scans_fast = first in ("LITERAL", "IN") and not self.pattern.flags & re.IGNORECASE
        return self._scans_fast

    @property
    def width(self) -> int:
        """The most characters one match takes."""
        if self._width < 0:
            from re import _parser  # type: ignore[attr-defined]

            self._width = _parser.parse(self.source).getwidth()[1]
        return self._width

    @property
    def needs(self) -> tuple[tuple[frozenset[str], bool], ...]:
        """Sets of (lower-cased) characters each match holds one of; `True` with a set: or it starts the text."""
        if self._needs is None:
            self._needs = _needs(self.source)
        return self._needs

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled


_RULES: list[Rule] | None = None
_BY_KIND: dict[str, Rule] = {}
_GLOBAL_ALLOW: tuple[list[re.Pattern[str]], list[str]] = ([], [])
_KEYWORDS: list[tuple[str, list[int]]] = []  # keyword -> indexes of the rules it gates
_KEYWORD_CHARS: list[frozenset[str]] = []
_KEYWORD_STRINGS: tuple[str, ...] = ()  # the keywords of _KEYWORDS, in its order


def _load() -> list[Rule]:
    global _RULES, _GLOBAL_ALLOW, _KEYWORDS, _KEYWORD_CHARS, _KEYWORD_STRINGS
    if _RULES is not None:
        return _RULES
    import json
    import os

    # a path beside this module, as lexicon and meaning read their data: importlib.resources costs 5 ms to import
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "secrets", "gitleaks_rules.json"),
              encoding="utf-8") as f:
        data = json.load(f)
    rules = [Rule(k, s, kw) for k, s, kw in _EARLY]
    ours = {k for k, _, _ in _EARLY + _LATE}
    for r in data["rules"]:
        if r["id"] in ours:
            continue  # ours covers it (and its label must mean one rule)
        allow = tuple((a["target"], tuple(a["regexes"]), tuple(a["stopwords"])) for a in r["allow"])
        rules.append(Rule(r["id"], r["regex"], tuple(r["keywords"]), r["group"], r["entropy"], allow))
    rules += [Rule(k, s, kw) for k, s, kw in _LATE]
    glob = data["global_allow"]
    _GLOBAL_ALLOW = ([re.compile(r) for r in glob["regexes"]], glob["stopwords"])
    index: dict[str, list[int]] = {}
    for i, rule in enumerate(rules):
        _BY_KIND.setdefault(rule.kind, rule)
        for kw in rule.keywords:
            index.setdefault(kw, []).append(i)
    _KEYWORDS = sorted(index.items())
    _KEYWORD_CHARS = [frozenset(kw) for kw, _ in _KEYWORDS]
    _KEYWORD_STRINGS = tuple(kw for kw, _ in _KEYWORDS)
    _RULES = rules
    return rules


def __getattr__(name: str) -> Any:
    if name == "PATTERNS":  # every rule as (kind, compiled expression), in the order `redact` tries them
        return [(rule.kind, rule.pattern) for rule in _load()]
    raise AttributeError(name)


# What a rule needs, read from its parsed expression, so a long text skips the rules it cannot hold: every
# match has a character of each needed set (`@` for a URL password, an operator for an assignment). Cheap
# to test (one `in` per character); `_NONASCII` stands for any character past ASCII.
_NONASCII = "\x80"
_ASCII = tuple(chr(i) for i in range(128))
_WORDISH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_NOT_WORD = frozenset(c.lower() for c in _ASCII if c.lower() not in _WORDISH) | {_NONASCII}


def _class_chars(items: list, icase: bool) -> frozenset[str] | None:
    from re import _constants as C  # type: ignore[attr-defined]

    categories = {C.CATEGORY_DIGIT: r"\d", C.CATEGORY_SPACE: r"\s", C.CATEGORY_WORD: r"\w"}
    chars: set[str] = set()
    wide = False
    for op, av in items:
        if op is C.LITERAL:
            chars.add(chr(av))
            wide |= av > 127
        elif op is C.RANGE:
            chars.update(map(chr, range(av[0], min(av[1], 127) + 1)))
            wide |= av[1] > 127
        elif op is C.CATEGORY and av in categories:
            chars.update(c for c in _ASCII if re.match(categories[av], c))
            wide = True
        else:  # a negated class, anything else: no need we can state
            return None
    low = {c.lower() for c in chars}
    if wide or icase and any(c.isalpha() for c in low):
        low.add(_NONASCII)  # \w, \d, \s match past ASCII; (?i) letters match e.g. the Kelvin sign
    return frozenset(low)


def _needs_of(seq: Any, icase: bool) -> list[frozenset[str]]:
    from re import _constants as C  # type: ignore[attr-defined]

    out: list[frozenset[str]] = []
    for op, av in seq:
        if op is C.LITERAL:
            c = chr(av)
            out.append(frozenset({c.lower()} | ({_NONASCII} if av > 127 or icase and c.isalpha() else set())))
        elif op is C.IN:
            got = _class_chars(av, icase)
            if got is not None:
                out.append(got)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            if av[0] >= 1:
                out += _needs_of(av[2], icase)
        elif op is C.SUBPATTERN:
            _, add, remove, sub = av
            out += _needs_of(sub, (icase or bool(add & C.SRE_FLAG_IGNORECASE)) and not remove & C.SRE_FLAG_IGNORECASE)
        elif op is C.ATOMIC_GROUP:
            out += _needs_of(av, icase)
        elif op is C.BRANCH:
            alts = [_needs_of(a, icase) for a in av[1]]
            if all(alts):
                out.append(frozenset().union(*(min(a, key=len) for a in alts)))
        # assertions, anchors, back references: nothing needed
    return out


def _needs(source: str) -> tuple[tuple[frozenset[str], bool], ...]:
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser

    parsed = _parser.parse(source)
    needs = [(s, False) for s in _needs_of(parsed, bool(parsed.state.flags & C.SRE_FLAG_IGNORECASE))]
    for prefix in (_B, "(?i)" + _B):
        if source.startswith(prefix):  # not after a letter, digit or `_`: after something else, or at the start
            needs.append((_NOT_WORD, True))
    return tuple(dict.fromkeys(sorted(needs, key=lambda n: len(n[0]))))


def _prefixes(seq: Any) -> tuple[list[str], bool] | None:
    """The literal strings (lower-cased) a parsed sequence starts with, and whether they are all of it; at
    most 16 (past that, the shorter ones so far)."""
    from re import _constants as C  # type: ignore[attr-defined]

    out = [""]
    for op, av in seq:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # takes no characters
        whole = True
        if op is C.LITERAL:
            more = [chr(av).lower()]
        elif op is C.IN and all(o is C.LITERAL for o, _ in av) and len(av) <= 6:
            more = sorted({chr(a).lower() for _, a in av})
        elif op in (C.SUBPATTERN, C.BRANCH, C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            if op is C.SUBPATTERN:
                alts = [av[3]]
            elif op is C.BRANCH:
                alts = av[1]
            else:
                low, high, sub = av
                if low == 0 and high != 1:
                    return out, False
                alts = [sub]
            got = [_prefixes(a) for a in alts]
            if None in got:
                return None if out == [""] else (out, False)
            more = list(dict.fromkeys(p for g in got for p in g[0]))  # type: ignore[index]
            whole = all(g[1] for g in got)  # type: ignore[index]
            if op not in (C.SUBPATTERN, C.BRANCH):
                if av[0] == 0:  # `?`: with it or without
                    if not whole:
                        return out, False
                    more = ["", *more]
                elif av[1] != 1:
                    whole = False  # more of it may follow
        else:
            return out, False
        grown = list(dict.fromkeys(a + b for a in out for b in more))
        if len(grown) > 16:
            return out, False
        out = grown
        if not whole:
            return out, False
    return out, True


def _starts(source: str) -> tuple[str, ...] | None:
    from re import _parser  # type: ignore[attr-defined]

    got = _prefixes(_parser.parse(source))
    # one character is too common to look for, unless it is past ASCII (a zero-width space)
    if got is None or any(len(p) < 2 and p.isascii() for p in got[0]):
        return None
    keep = sorted(set(got[0]), key=len)
    return tuple(p for i, p in enumerate(keep) if not any(p.startswith(q) for q in keep[:i]))


def _reach(seq: Any) -> int:
    """The most characters past a match's start the engine may look at: its longest match, with what each
    lookahead may read counted as taken (an upper bound; `_windowed` searches a window that long)."""
    from re import _constants as C  # type: ignore[attr-defined]
    from re import _parser  # type: ignore[attr-defined]

    total = 0
    for op, av in seq:
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            total += av[1] * _reach(av[2])
        elif op is C.SUBPATTERN:
            total += _reach(av[3])
        elif op is C.ATOMIC_GROUP:
            total += _reach(av)
        elif op is C.BRANCH:
            total += max(_reach(a) for a in av[1])
        elif op in (C.ASSERT, C.ASSERT_NOT):
            if av[0] > 0:  # a lookahead reads on from here without taking
                total += _reach(av[1])
        else:
            total += _parser.SubPattern(seq.state, [(op, av)]).getwidth()[1]
    return total


# Past this many places of its strings, a rule is scanned whole rather than tried at each place. Most rules
# start with a look-behind (a boundary), so a scan tries them at every position (~50 ns each); a `match` at a
# place costs ~0.4 us: past one place in 16 characters, the scan. A search around each place costs more.
_DENSE_NEAR = 8192


def _dense(low: str) -> int:
    return max(_DENSE_NEAR, len(low) // 16)


def _most_tried(rule: Rule, size: int) -> int:
    """The most places of its `inside` strings at which `_windowed` tries `rule` in a text of `size` characters;
    past that it scans the text, so finding more of them is wasted."""
    if rule.inside[1]:  # type: ignore[index]
        return _DENSE_NEAR  # a search around each place costs more than a match at it
    # a scan of a fast rule costs about what 2,000 calls do per megabyte
    return (size >> 9) + 64 if rule.scans_fast else max(_DENSE_NEAR, size // 16)


def _places(start: str, low: str, seen: dict[str, list[int] | None], most: int = 0) -> list[int] | None:
    """Where `start` is in `low` (None: more than `most`, or `_dense`, places); `seen` keeps them for the other
    rules."""
    if start in seen:
        return seen[start]
    got: list[int] | None = []
    dense = most or _dense(low)
    if _counted_dense(start, low, low.count(start, 0, _CHUNK), dense):
        seen[start] = None
        return None
    i = low.find(start)
    while i >= 0:
        got.append(i)  # type: ignore[union-attr]
        if len(got) > dense:  # type: ignore[arg-type]
            got = None
            break
        i = low.find(start, i + 1)
    seen[start] = got
    return got


_CHUNK = 1 << 16


def _counted_dense(start: str, low: str, in_a_chunk: int, most: int) -> bool:
    """Whether `start`, found `in_a_chunk` times in one chunk of `low`, is past `most` places in all of it, when
    `most` is more than is cheap to gather: as dense in every chunk, and counted when it would be less than
    twice as dense (at `str.count` speed; the count leaves out overlapping places, so past `most` it is dense)."""
    expected = in_a_chunk * -(-len(low) // _CHUNK)
    if expected <= most or most <= _DENSE_NEAR:
        return False  # gathered, and found dense once it is
    return expected > 2 * most or low.count(start) > most


_AUTOMATA: dict[tuple[str, ...], Any] = {}


_AHOCORASICK: Any = None  # the `ahocorasick_rs` module once looked for; False when it is not installed


def _automaton(strings: tuple[str, ...], dfa: bool = False) -> Any:
    """An Aho-Corasick automaton over `strings` (None without the `ahocorasick_rs` package); `dfa`: one that
    takes ~1 ms more to build and scans a megabyte in about half the time."""
    global _AHOCORASICK
    got = _AUTOMATA.get(strings)
    if got is None:
        if _AHOCORASICK is None:
            try:
                import ahocorasick_rs as _AHOCORASICK  # type: ignore[no-redef]
            except ImportError:  # looked for once: a failed import costs more than what it would save
                _AHOCORASICK = False
        if _AHOCORASICK is False:
            return None
        if len(_AUTOMATA) > 64:
            _AUTOMATA.clear()
        kind = _AHOCORASICK.Implementation.DFA if dfa else None
        got = _AUTOMATA[strings] = _AHOCORASICK.AhoCorasick(strings, implementation=kind)
    return got


def _find_all(strings: list[str], low: str, seen: dict[str, list[int] | None], most: dict[str, int]) -> None:
    """`_places` of each of `strings` into `seen`, in one pass over `low` for many of them (~200 vendored rules
    each have a start or two, and a `find` for each reads the text again). The pass goes a chunk at a time, and
    a string past the places its rules are tried at (`most`, else `_dense`) leaves the automaton (its places are
    None: they scan), so a dense string costs a count, not a place gathered for each."""
    dense_at = _dense(low)
    limit = {s: most.get(s) or dense_at for s in strings}
    for start in dict.fromkeys(strings):
        if len(start) == 1 and start not in seen and low.count(start) > limit[start]:
            seen[start] = None  # a character: counted at memchr speed, not gathered to find it dense
    todo = [s for s in dict.fromkeys(strings) if s not in seen]
    ac = _automaton(tuple(todo), dfa=True) if len(todo) > 8 else None
    if ac is None:
        for start in todo:
            _places(start, low, seen, limit[start])
        return
    found: list[list[int]] = [[] for _ in todo]
    live = list(range(len(todo)))
    overlap = max(map(len, todo)) - 1
    chunks = -(-len(low) // _CHUNK)
    judged: set[int] = set()  # as dense as `most` in a chunk, not dense by `_counted_dense`: by its places
    for c0 in range(0, len(low), _CHUNK):
        got = ac.find_matches_as_indexes(low[c0:c0 + _CHUNK + overlap], overlapping=True)
        dense = []
        if not c0 or len(got) > _DENSE_NEAR:
            # counted first, so the places of a string that turns dense are not gathered
            from collections import Counter
            from operator import itemgetter

            for k, n in Counter(map(itemgetter(0), got)).items():
                i = live[k]
                if len(found[i]) + n > limit[todo[i]]:
                    dense.append(i)
                elif i not in judged and n * chunks > limit[todo[i]]:
                    if _counted_dense(todo[i], low, n, limit[todo[i]]):
                        dense.append(i)
                    judged.add(i)
            if dense:
                gone = {live.index(i) for i in dense}
                got = [m for m in got if m[0] not in gone]
        for k, at, _ in got:
            if at < _CHUNK:  # one starting in the overlap is the next chunk's
                found[live[k]].append(c0 + at)
        dense += [i for i in live if len(found[i]) > limit[todo[i]] and i not in dense]
        if dense:
            for i in dense:
                seen[todo[i]] = None
            live = [i for i in live if i not in dense]
            if not live:
                return
            ac = _automaton(tuple(todo[i] for i in live), dfa=True)
    for i in live:
        seen[todo[i]] = found[i]


def _moved(seen: dict[str, list[int] | None], edits: list[tuple[int, int, int]],
           low: str) -> dict[str, list[int] | None]:
    """`seen` for the text `edits` (sorted (start, end, new length) of the old text) made, whose folded copy is
    `low`: a place the edits left alone moves by what came before it, one they touched goes, and the text
    around each edit is searched again (for a string the edits made or joined)."""
    from bisect import bisect_left, bisect_right

    out: dict[str, list[int] | None] = {}
    most = _dense(low)
    for start, places in seen.items():
        if places is None:
            continue  # dense: found again if a rule still needs it
        size = len(start)
        # the places between two edits, each run shifted at once (a few edits in a megabyte of places: a copy)
        kept: list[int] = []
        delta = first = 0
        for a, b, n in edits:
            last = bisect_right(places, a - size, first)
            kept += places[first:last] if not delta else [p + delta for p in places[first:last]]
            first = bisect_left(places, b, last)  # those overlapping the edit go
            delta += n - (b - a)
        kept += places[first:] if not delta else [p + delta for p in places[first:]]
        delta = 0
        for a, b, n in edits:
            lo, hi = a + delta - size + 1, a + delta + n + size - 1
            i = low.find(start, max(lo, 0), hi)
            while i >= 0:
                at = bisect_left(kept, i)
                if at == len(kept) or kept[at] != i:
                    kept.insert(at, i)
                i = low.find(start, i + 1, hi)
            delta += n - (b - a)
        out[start] = kept if len(kept) <= most else None
    return out


def _windowed(rule: Rule, text: str, low: str, seen: dict[str, list[int] | None],
              edits: list[tuple[int, int, int]]) -> str:
    """`_replace`, for a long text, with `rule` tried only where one of its `starts` is (every match starts
    there, so this finds what a scan finds), or searched only from `lead` before each of its `inside`
    strings; its keywords looked for only once it matches. `edits` as `_replace` fills it."""
    strings, lead, reach = rule.inside  # type: ignore[misc]
    found: list[int] = []
    most = _most_tried(rule, len(low))
    heads = rule.heads if not lead else None
    # the strings found densely last: the places of the rest may already be too many
    for start in sorted(strings, key=lambda s: _places(s, low, seen, most) is None):
        got = _places(start, low, seen, most)
        if got is None and heads is not None:  # dense: where it begins a match, found by its head
            got = _head_places(heads[start], low, most - len(found))
        if got is None:
            break
        found += got
        if len(found) > most:
            got = None
            break
    if got is None:  # dense: one scan costs less than a call per place
        return _replace(rule, text, edits) if any(kw in low for kw in rule.keywords) else text
    if not found:
        return text
    found.sort()
    out: list[str] = []
    last = done = 0
    kind = rule.kind
    for m in (_matches_at(rule.pattern, text, found) if not lead else _matches_near(rule.pattern, text, found, lead, reach)):
        i = m.start()
        if not out and not any(kw in low for kw in rule.keywords):
            return text
        new = _sub(kind, m)
        out += (text[last:i], new)
        last = m.end()
        if new != m.group(0):
            edits.append((i, last, len(new)))
        done += 1
        if done >= _MAX_REPLACED:
            edits.clear()
            return _replace(rule, text, edits)  # that many: as a scan does, with its region
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _head_places(head: re.Pattern[str], low: str, most: int) -> list[int] | None:
    """Where `head` (one of `Rule.heads`) finds a match may start in `low` (None: more than `most` places)."""
    from itertools import islice

    found = [m.start() for m in islice(head.finditer(low), most + 1)]
    return found if len(found) <= most else None


def _matches_at(pattern: re.Pattern[str], text: str, found: list[int]) -> Any:
    """What `pattern.finditer(text)` finds when every match starts at one of `found` (sorted)."""
    last = 0
    match = pattern.match
    for i in found:
        if i < last:
            continue
        m = match(text, i)
        if m is not None:
            yield m
            last = m.end()


def _matches_near(pattern: re.Pattern[str], text: str, found: list[int], lead: int, reach: int) -> Any:
    """What `pattern.finditer(text)` finds when every match starts at most `lead` before one of `found`
    (sorted): a search from each window, in the text cut `reach` past the window's last start (no match
    starting there reads further, so the cut changes nothing for the matches kept)."""
    n = len(text)
    last = 0
    k = 0
    search = pattern.search
    while k < len(found):
        lo, hi = found[k] - lead, found[k]
        k += 1
        while k < len(found) and found[k] - lead <= hi + 1:
            hi = found[k]
            k += 1
        pos = max(lo, last, 0)
        while pos <= hi:
            m = search(text, pos, min(n, hi + reach + 1))
            if m is None or m.start() > hi:
                break
            yield m
            last = pos = m.end() if m.end() > m.start() else m.end() + 1


def _entropy(s: str) -> float:
    import math

    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in (s.count(ch) for ch in set(s))) if n else 0.0


def _allowed(rule: Rule, match: re.Match[str], secret: str) -> bool:
    """gitleaks' own exceptions for a vendored rule: too little entropy, a known example, a placeholder."""
    if rule.entropy and _entropy(secret) < rule.entropy:
        return True
    low = secret.lower()
    regexes, stopwords = _GLOBAL_ALLOW
    if any(r.search(secret) for r in regexes) or any(w in low for w in stopwords):
        return True
    for target, rxs, words in rule.allow:
        subject = match.group(0) if target == "match" else secret
        if target == "line":
            text = match.string
            subject = text[text.rfind("\n", 0, match.start()) + 1:(text.find("\n", match.end()) + 1 or len(text) + 1) - 1]
        if any(re.search(r, subject) for r in rxs) or any(w in subject.lower() for w in words):
            return True
    return False


def _assignment_ok(match: re.Match[str]) -> bool:
    """Whether the secret word this match starts with really ends a secret's name (see `_GLUED_OK`)."""
    text, start = match.string, match.start()
    word = match.group("w")
    low = word.lower()
    if not (word.islower() or word.isupper() or word[0].isupper() and word[1:].islower()):
        return False
    before = text[max(0, start - 2):start]
    prev = before[-1:] or " "
    name = re.search(r"[A-Za-z0-9_.-]{0,64}$", text[max(0, start - 64):start]).group(0).lower()  # type: ignore[union-attr]
    if low == "key" and name.rstrip("_.-").endswith(_NOT_SECRET_KEYS):
        return False
    if not (prev.isalnum() and prev.isascii()):
        if prev in "_.-" and before[:1].isalnum():
            return True  # after a separator: DB_PASS, api.key
        return low not in _NEVER_BARE  # the whole name (also after a JSON escape such as \\n)
    if word[0].isupper() and not word.isupper():
        return prev.islower() or prev.isdigit()  # camelCase: dbPassword, accessToken, SecretAccessKey
    if word.isupper() and prev.isupper() or word.islower() and prev.islower():
        # PGPASSWORD, clientsecret, apikey (not monkey, compass, author)
        return (low in _GLUED_OK or low == "key" and name.endswith(_GLUED_KEY)
                or low == "pass" and name.endswith("ssh"))  # SSHPASS, sshpass's own variable
    return False


def _sub(kind: str, match: re.Match[str]) -> str:
    """The text of one match with its secret replaced by `[redacted:<kind>]` (or left as it is)."""
    if kind == "zero-width":
        return ""
    rule = _BY_KIND.get(kind) or (_load() and _BY_KIND[kind])
    if kind == "secret-assignment" and not _assignment_ok(match):
        return match.group(0)
    group = rule.group
    if not group:
        named = match.re.groupindex
        for name in ("v", "v1", "v2", "v3", "v4"):
            if name in named and match.group(name) is not None:
                group = named[name]
                break
        else:
            if match.re.groups and rule.source not in _OURS:  # gitleaks: the first group that matched
                group = next((g for g in range(1, match.re.groups + 1) if match.group(g)), 0)
    secret = match.group(group)
    if rule.source not in _OURS and _allowed(rule, match, secret):
        return match.group(0)
    whole = match.group(0)
    base = match.start()
    return whole[:match.start(group) - base] + f"[redacted:{kind}]" + whole[match.end(group) - base:]


_OURS = frozenset(s for _, s, _ in _EARLY + _LATE)
# Starts `_prefixes` cannot read: every secret-assignment match starts with its secret word (`w`), and in
# `_folded` text that word starts with one of these.
_KNOWN_STARTS = {_LATE[-1][1]: ("pass", "pwd", "token", "secret", "credential", "key", "auth")}


def _assignment_heads(starts: tuple[str, ...]) -> dict[str, str]:
    """For each start of a secret word, over the folded text: the rest of the words it begins (a bare one after
    a name's character), then an operator. No word holds its start twice, so a scan that takes a word skips no
    place of the start."""
    heads = {}
    for start in starts:
        rests = [w[len(start):] for w in _GLUED_WORDS if w.startswith(start)]
        rests += [r"(?<=[a-z0-9_.\-]" + w + ")" for w in _BARE_WORDS if w == start]
        heads[start] = "(?:" + "|".join(rests) + ")(?=" + _OP + ")"
    return heads


# For each of a rule's starts, what follows it wherever a match begins there (over the folded text; led by the
# start, `re` skips from one place of it to the next): fewer places than the start's, for a text that holds it
# densely, where the rule's own scan tries every character a match can start with (a megabyte of `openssl
# -passin pass:`, a bare `pass` after a space every 21 characters).
_KNOWN_HEADS = {_LATE[-1][1]: _assignment_heads(_KNOWN_STARTS[_LATE[-1][1]])}
# Strings one of which every match holds at most `lead` characters after its start (by the expression, read
# by hand; keyed by the exact source, so a changed rule falls back to a scan): `_windowed` searches only the
# places from `lead` before each.
_KNOWN_INSIDE: dict[str, tuple[tuple[str, ...], int]] = {
    _LATE[5][1]: (("://",), 32),  # url-password: a scheme of 1 to 32 characters, then `://`
    # azure-ad-client-secret: one boundary character (or none), 3 characters and a digit, then `Q~`
    r"""(?:^|[\\'"\x60\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"\x60\s<),])""": (("q~",), 5),
    # facebook-access-token: 15 or 16 digits, then `|` or `%`
    r"""(?i)(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))(\d{15,16}(\||%)[0-9a-z\-_]{27,40})(?:[\x60'"\s;]|\\[nr]|$)""":
        (("|", "%"), 16),
    # maxmind-license-key: 6 letters or digits, `_`, 29 more, then `_mmk`
    r"""(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))([A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?:[\x60'"\s;]|\\[nr]|$)""":
        (("_mmk",), 36),
}
OWN_KINDS = tuple(dict.fromkeys(kind for kind, _, _ in _EARLY + _LATE if kind != "zero-width"))  # our rules' labels


_GATED_ALONE = 64  # texts gated one keyword at a time before the automaton is worth its import and build
_gate_calls = 0


def _gated(rules: list[Rule], low: str) -> list[int]:
    """Indexes of the rules whose keywords occur in `low` (a lower-cased text), in rule order. One pass of an
    automaton over the ~250 keywords (~1.5 us for a line) instead of an `in` each (~20 us), once a process
    has gated enough texts to pay for loading it (~1 ms; a hook redacts a few dozen)."""
    global _gate_calls
    _gate_calls += 1
    ac = _automaton(_KEYWORD_STRINGS) if _gate_calls > _GATED_ALONE else None
    if ac is not None:
        found = {i for k, _, _ in ac.find_matches_as_indexes(low, overlapping=True) for i in _KEYWORDS[k][1]}
        return sorted(found)
    found = set()
    if len(low) > 4096:
        chars = set(low)
        for (kw, idx), kc in zip(_KEYWORDS, _KEYWORD_CHARS):
            if kc <= chars and kw in low:
                found.update(idx)
    else:
        for kw, idx in _KEYWORDS:
            if kw in low:
                found.update(idx)
    return sorted(found)


PRIVATE = "[private]"
_PRIVATE_SPAN = re.compile(r"<private(?:\s[^<>]{0,1024})?>(?:(?!</private\s{0,16}>)[\s\S]){0,10000000}(?:</private\s{0,16}>)?",
                           re.I)


_PRIVATE_TAG = re.compile(r"<private(?:\s[^<>]{0,1024})?>", re.I)
_PRIVATE_END = re.compile(r"</private\s{0,16}>", re.I)
_PRIVATE_MAX = 10000000  # the longest span _PRIVATE_SPAN takes


def hide_private(text: str) -> str:
    """`<private>…</private>` -> `[private]`; an unclosed tag hides the rest of the text.

    What `_PRIVATE_SPAN.sub(PRIVATE, text)` does, without its test for the closing tag at every character
    of the span (a span of the whole text, `"<private>" * n`, took 50 ms per MB)."""
    if not text or "<" not in text:  # (no lower-cased copy: `İ` * n lowers at 40 ms per MB)
        return text
    out: list[str] = []
    pos = 0
    while (tag := _PRIVATE_TAG.search(text, pos)) is not None:
        body = tag.end()
        close = _PRIVATE_END.search(text, body)
        if close is not None and close.start() - body <= _PRIVATE_MAX:
            end = close.end()
        else:
            end = min(len(text), body + _PRIVATE_MAX)
        out += (text[pos:tag.start()], PRIVATE)
        pos = end
    out.append(text[pos:])
    return "".join(out)


# A text longer than this takes the long path: rules it cannot hold skipped by what they need, keywords
# looked for only for the rest, and at most _MAX_REPLACED replacements per rule (see `_replace`).
_LONG = 1 << 14
_MAX_REPLACED = 1000


def _replace(rule: Rule, text: str, edits: list[tuple[int, int, int]] | None = None) -> str:
    """`rule`'s matches in `text` replaced. After _MAX_REPLACED matches (replaced, or let be as gitleaks' allow
    lists say), the rest of the region they are in (from the next match to the last keyword plus the rule's
    longest match) becomes one label: a text with that many matches of one rule is an attack or a dump, and a
    call per match would cost seconds (never what a capped entry keeps: that many matches take more than its
    cap).
    `edits`, when given, gets (start, end, length of what replaced it) for each change (the zero-width rule
    records none)."""
    kind = rule.kind
    if kind == "zero-width":
        return rule.pattern.sub("", text)  # what _sub does, without a call per character
    out: list[str] = []
    last = done = 0
    matches = rule.pattern.finditer(text)
    while (m := next(matches, None)) is not None:
        new = _sub(kind, m)
        out += (text[last:m.start()], new)
        last = m.end()
        if new != m.group(0) and edits is not None:
            edits.append((m.start(), last, len(new)))
        done += 1
        if done == _MAX_REPLACED and (m := next(matches, None)) is not None:
            # No match ends further than the rule's longest match past its keyword; the text after
            # the region is scanned as before.
            low = text.lower()
            end = len(text)
            if len(low) == len(text):
                last_kw = max(low.rfind(kw) for kw in rule.keywords)
                end = max(m.end(), min(end, last_kw + rule.width))
            out += (text[last:m.start()], f"[redacted:{kind}]")
            if edits is not None:
                edits.append((m.start(), end, len(out[-1])))
            last = end
            done = 0
            matches = rule.pattern.finditer(text, end)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _runnable(rules: list[Rule], text: str, low: str) -> list[tuple[int, bool]]:
    """For a long text: (index, only at the start) of each rule whose needs the text meets and one of
    whose keywords it holds, in rule order."""
    present = {c for c in _alphabet() if c in low}
    if not text.isascii():
        present.add(_NONASCII)
    out: list[tuple[int, bool]] = []
    seen: dict[str, bool] = {}
    for i, rule in enumerate(rules):
        at_start = False
        for chars, or_start in rule.needs:
            if chars.isdisjoint(present):
                if not or_start:
                    break
                at_start = True
        else:
            if rule.inside is not None and not at_start:
                out.append((i, False))  # its keywords are looked for once it matches (`_windowed`)
                continue
            for kw in rule.keywords:
                found = seen.get(kw)
                if found is None:
                    found = seen[kw] = not _ALPHABET.intersection(kw).difference(present) and kw in low
                if found:
                    out.append((i, at_start))
                    break
    return out


_ALPHABET: frozenset[str] | None = None


def _alphabet() -> frozenset[str]:
    global _ALPHABET
    if _ALPHABET is None:
        _ALPHABET = frozenset().union(*(chars for rule in _load() for chars, _ in rule.needs)) - {_NONASCII}
    return _ALPHABET


def _folded(text: str) -> str:
    """`text` lower-cased, character for character (so a place in it is the same place in `text`), with the
    characters `re`'s (?i) matches to an ASCII letter made that letter: İ ı -> i, ſ -> s (K lowers to k)."""
    if text.isascii():
        return text.lower()
    if "\u0130" in text:  # the one character whose lower case is two
        text = text.replace("\u0130", "i")
    low = text.lower()
    for odd, plain in (("\u0131", "i"), ("\u017f", "s")):
        if odd in low:
            low = low.replace(odd, plain)
    return low


MEMO_LONGEST = 512  # texts up to this long are remembered: the ones that repeat (a cwd, a tool input's keys)
MEMO_MOST = 8192  # texts remembered at once: a pass over many transcripts starts over when it has this many


class Memo:
    """Short texts redacted once and looked up when redacted again, for as long as its owner keeps it: one
    autobank pass owns one, and hands it to what renders its entries (every entry of a project redacts its
    cwd and its tool names, a turn's checkpoint its prompt). The rules do not change within a pass."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done: dict[object, dict[str, str]] = {}

    def of(self, redacting: Callable[[str], str]) -> Callable[[str], str]:
        """`redacting` (`redact`, as its caller imported it), its results for short texts remembered."""
        memo = self.done.setdefault(redacting, {})

        def remembered(text: str) -> str:
            if not text or len(text) > MEMO_LONGEST:
                return redacting(text)
            done = memo.get(text)
            if done is None:
                if len(memo) >= MEMO_MOST:
                    memo.clear()
                done = memo[text] = redacting(text)
            return done

        return remembered


def redact(text: str) -> str:
    """`text` with every secret and private span in it replaced (see the module docstring)."""
    return _redact(text)


def _redact(text: str) -> str:
    text = hide_private(text)
    if not text:
        return text
    rules = _RULES or _load()
    if len(text) > _LONG:
        return _redact_long(rules, text)
    low = text.lower()
    for i in _gated(rules, low):
        rule = rules[i]
        if not any(kw in low for kw in rule.keywords):
            continue  # an earlier rule took the keyword away
        new = _replace(rule, text)
        if new != text:
            text, low = new, new.lower()
    return text


def _redact_long(rules: list[Rule], text: str) -> str:
    low = _folded(text)
    seen: dict[str, list[int] | None] = {}
    todo = _runnable(rules, text, low)
    windowed = [i for i, at_start in todo if not at_start and rules[i].inside is not None]
    most: dict[str, int] = {}  # the most places of a string a rule that looks for it tries it at
    for k in windowed:
        for s in rules[k].inside[0]:  # type: ignore[index]
            most[s] = max(most.get(s, 0), _most_tried(rules[k], len(low)))
    for i, at_start in todo:
        rule = rules[i]
        edits: list[tuple[int, int, int]] = []
        if not at_start and rule.inside is not None:
            if any(s not in seen for s in rule.inside[0]):  # the rest's starts too, in one pass
                rest = [s for k in windowed if k >= i for s in rules[k].inside[0]]  # type: ignore[index]
                _find_all(rest, low, seen, most)
            new = _windowed(rule, text, low, seen, edits)
        elif not any(kw in low for kw in rule.keywords):
            continue  # an earlier rule took the keyword away
        elif at_start:  # no match can start anywhere else
            m = rule.pattern.match(text)
            head = "" if m is None else _sub(rule.kind, m)
            new = text if m is None else head + text[m.end():]
            if m is not None:
                edits.append((0, m.end(), len(head)))
        else:
            new = _replace(rule, text, edits)
        if new != text:
            text, low = new, _folded(new)
            seen = _moved(seen, edits, low) if edits and len(edits) <= 256 else {}
    return text


def redact_value(value: Any) -> Any:
    """A JSON-able value with every string in it redacted (dict keys too)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def redact_json(text: str) -> str:
    """A JSON document with every string in it redacted; unchanged (same object) when clean."""
    if not text or redact(text) == text:
        return text
    import json

    try:
        return json.dumps(redact_value(json.loads(text)))
    except ValueError:
        return redact(text)
