"""The rules a secret is found by, in the order they are tried: ours (the table below: tokens by their
prefixes, a password given to a command, a secret assigned to a name), and gitleaks' maintained rules, vendored
as data in `data/secrets/` (converted by `scripts/update_secret_rules.py`; see SOURCE.md there) and read and
compiled on first use, each only once its keyword is seen. A rule runs only when one of its keywords is in the
lower-cased text, as gitleaks does.

Every expression is written (or converted) for a backtracking engine: no nested quantifiers over overlapping
classes, every repetition bounded, so a text costs time in proportion to its length (tests/redaction/test_redact.py holds
hostile megabytes to a bound)."""

from __future__ import annotations

import re
from typing import Any

from . import expressions
from .expressions import BOUNDARY as _B
from .expressions import BOUNDARY_AFTER_FIRST as _B1

ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"

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

# (kind, expression, keywords). Order matters: tokens first, then gitleaks' rules, then the
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

# Starts `expressions.starts` cannot read: every secret-assignment match starts with its secret word (`w`), and in
# the engine's folded text that word starts with one of these.
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
# by hand; keyed by the exact source, so a changed rule falls back to a scan): the engine searches only the
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
OURS = frozenset(s for _, s, _ in _EARLY + _LATE)  # our rules' expressions (a vendored rule is not one)


class Rule:
    __slots__ = ("kind", "source", "keywords", "group", "entropy", "allow", "_compiled", "_needs", "_width", "_starts",
                 "_inside", "_scans_fast", "_heads", "_analysed")

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
        self._analysed: bool | None = None  # whether the properties came from `analysis.json` (None: not yet asked)

    def _analysed_now(self) -> bool:
        """The properties taken from `analysis.json` on the first that is asked (once: a rule it does not hold
        works each out from its expression)."""
        if self._analysed is None:
            self._analysed = self._take_analysis()
        return bool(self._analysed)

    def _take_analysis(self) -> bool:
        """Each property below from `analysis.json`, if it holds this expression: True if so."""
        known = _analysed(self.source)
        if known is None:
            return False
        try:
            needs = tuple((frozenset(chars), bool(or_start)) for chars, or_start in known["needs"])
            starts = None if known["starts"] is None else tuple(known["starts"])
            inside = known["inside"]
            inside = None if inside is None else (tuple(inside[0]), int(inside[1]), int(inside[2]))
            scans_fast, width = bool(known["scans_fast"]), int(known["width"])
        except (KeyError, TypeError, ValueError, IndexError):
            return False  # a damaged entry: worked out from the expression instead
        self._needs, self._starts, self._inside, self._scans_fast, self._width = needs, starts, inside, scans_fast, width
        return True

    def analysis(self) -> dict[str, Any]:
        """What `analysis.json` holds of this expression, worked out from it (`scripts/update_secret_rules.py`)."""
        fresh = Rule(self.kind, self.source, self.keywords)
        fresh._analysed = False
        inside = fresh.inside
        return {"needs": [["".join(sorted(chars)), or_start] for chars, or_start in fresh.needs],
                "starts": None if fresh.starts is None else list(fresh.starts),
                "inside": None if inside is None else [list(inside[0]), inside[1], inside[2]],
                "scans_fast": fresh.scans_fast, "width": fresh.width}

    @property
    def starts(self) -> tuple[str, ...] | None:
        """Lower-cased strings one of which every match starts with (None: not known), for the engine's windows."""
        if self._starts is False and not self._analysed_now():
            self._starts = _KNOWN_STARTS.get(self.source) or expressions.starts(self.source)
        return self._starts  # type: ignore[return-value]

    @property
    def inside(self) -> tuple[tuple[str, ...], int, int] | None:
        """(strings, lead, reach): every match holds one of the (lower-cased) strings at most `lead` characters
        past its start, and the engine reads at most `reach` characters past it (None: not known)."""
        if self._inside is False and not self._analysed_now():
            known = _KNOWN_INSIDE.get(self.source)
            if known is not None:
                from re import _parser  # type: ignore[attr-defined]

                self._inside = (*known, expressions.reach(_parser.parse(self.source)))
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
        with a character), case kept: `re` then skips to each place one is, where one that starts with a look-behind is
        tried at every position."""
        if self._scans_fast is None and not self._analysed_now():
            from re import _parser  # type: ignore[attr-defined]

            parsed = _parser.parse(self.source)
            first = str(parsed[0][0]) if len(parsed.data) else ""
            if first == "SUBPATTERN" and not parsed[0][1][1]:  # a group that sets no flag: its first item
                parsed = parsed[0][1][3]
                first = str(parsed[0][0]) if len(parsed.data) else ""
            if first == "BRANCH":
                first = "LITERAL" if all(alt.data and str(alt[0][0]) == "LITERAL" for alt in parsed[0][1][1]) else ""
            self._scans_fast = first in ("LITERAL", "IN") and not self.pattern.flags & re.IGNORECASE
        return self._scans_fast  # type: ignore[return-value]

    @property
    def width(self) -> int:
        """The most characters one match takes."""
        if self._width < 0 and not self._analysed_now():
            from re import _parser  # type: ignore[attr-defined]

            self._width = _parser.parse(self.source).getwidth()[1]
        return self._width

    @property
    def needs(self) -> tuple[tuple[frozenset[str], bool], ...]:
        """Sets of (lower-cased) characters each match holds one of; `True` with a set: or it starts the text."""
        if self._needs is None and not self._analysed_now():
            self._needs = expressions.needs(self.source)
        return self._needs  # type: ignore[return-value]

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source)
        return self._compiled


_ANALYSIS: dict[str, dict[str, Any]] | None = None


def _analysed(source: str) -> dict[str, Any] | None:
    """What `Rule.analysis` worked out of this expression when the rules were last vendored, read from
    data/secrets/analysis.json on first use: parsing every rule's expression again was most of what a process's
    first long text cost. None for an expression it does not hold (a rule changed since): worked out then."""
    global _ANALYSIS
    if _ANALYSIS is None:
        import json

        try:
            with open(_data_path("analysis.json"), encoding="utf-8") as f:
                _ANALYSIS = dict(json.load(f)["expressions"])
        except (OSError, ValueError, KeyError, TypeError):
            _ANALYSIS = {}
    return _ANALYSIS.get(source)


def _data_path(name: str) -> str:
    import os

    # a path beside the package, as lexicon and meaning read their data: importlib.resources is slow to import
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(package, "data", "secrets", name)


RULES: list[Rule] | None = None
BY_KIND: dict[str, Rule] = {}
_GLOBAL_ALLOW: tuple[list[re.Pattern[str]], list[str]] = ([], [])
KEYWORDS: list[tuple[str, list[int]]] = []  # keyword -> indexes of the rules it gates
KEYWORD_CHARS: list[frozenset[str]] = []
KEYWORD_STRINGS: tuple[str, ...] = ()  # the keywords of KEYWORDS, in its order


def load() -> list[Rule]:
    global RULES, _GLOBAL_ALLOW, KEYWORDS, KEYWORD_CHARS, KEYWORD_STRINGS
    if RULES is not None:
        return RULES
    import json

    with open(_data_path("gitleaks_rules.json"), encoding="utf-8") as f:
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
        BY_KIND.setdefault(rule.kind, rule)
        for kw in rule.keywords:
            index.setdefault(kw, []).append(i)
    KEYWORDS = sorted(index.items())
    KEYWORD_CHARS = [frozenset(kw) for kw, _ in KEYWORDS]
    KEYWORD_STRINGS = tuple(kw for kw, _ in KEYWORDS)
    RULES = rules
    return rules


def _entropy(s: str) -> float:
    import math

    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in (s.count(ch) for ch in set(s))) if n else 0.0


def allowed(rule: Rule, match: re.Match[str], secret: str) -> bool:
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


def assignment_ok(match: re.Match[str]) -> bool:
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
