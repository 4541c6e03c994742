"""Nothing we persist holds a secret the bank would redact, or a <private> span: every byte under
the agent dir (bank, MAIN.md, summaries, state files, ledger, index, logs) is searched.

One secret of each kind is planted in real transcripts of all four harnesses (prompts, tool
inputs, answers, todos, plans, compaction summaries), then passes, all four hooks, a compaction,
state updates, logged errors and a failing CLI command run over them."""

from __future__ import annotations

import io
import json
import re
import shutil
import time
from pathlib import Path

import pytest

from harnesslink_core import clock, hooks, log, main
from harnesslink_core.banking import autobank
from harnesslink_core.commands import resume
from harnesslink_core.control import forget
from harnesslink_core.redact import OWN_KINDS
from harnesslink_core.harnesses.claude_code import sessions as claude_sessions
from harnesslink_core.store.ledger import open_ledger
from tests.test_all_harnesses import GENERATED, HOMES

# kind -> (text planted, the part that must never be stored)
SECRETS = {
    "private-key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAplantedKeyBody0123\n-----END RSA PRIVATE KEY-----",
                    "MIIEowIBAAKCAQEAplantedKeyBody0123"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlcGxhbnRlZA",) * 2,
    "aws-access-key": ("AKIAPLANTEDKEY123456",) * 2,
    "github-token": ("ghp_PlantedToken0123456789abcdefghijklmn",) * 2,
    "gitlab-token": ("glpat-Planted0123456789abcd",) * 2,
    "slack-token": ("xoxb-1234567890-planted-slacktoken",) * 2,
    "slack-webhook": ("https://hooks.slack.com/services/T000PLANT/B000PLANT/plantedWebhookSecret",
                      "plantedWebhookSecret"),
    "anthropic-key": ("sk-ant-api03-plantedAnthropicKey0123456789",) * 2,
    "openai-key": ("sk-proj-plantedOpenaiKey0123456789abcd",) * 2,
    "google-api-key": ("AIza" + "PlantedGoogle0123456789abcdefghijklmnop"[:35],) * 2,
    "stripe-key": ("sk_live_PlantedStripe0123456789",) * 2,
    "bearer-token": ("Authorization: Bearer plantedBearerToken0123456789", "plantedBearerToken0123456789"),
    "url-password": ("postgres://admin:PlantedUrlPass99@db.example.com/app", "PlantedUrlPass99"),
    "aws-secret-key": ("aws_secret_access_key=PlantedAwsSecret0123456789abcdefghijklmn",
                       "PlantedAwsSecret0123456789abcdefghijklmn"),
    "cli-secret": ("--password PlantedCliPass77", "PlantedCliPass77"),
    "secret-assignment": ("DB_PASSWORD=PlantedDbPass55", "PlantedDbPass55"),
    "private-span": ("<private>PlantedPrivateSpan</private>", "PlantedPrivateSpan"),
    "unclosed-private-span": ("<private>PlantedUnclosedSpan", "PlantedUnclosedSpan"),
    # kinds a hostile try found unredacted (no pattern, or a partial one)
    "aws-sts-secret": ('"SecretAccessKey": "wJalrXUtnFEMIK7MDENGbPxRfiCYPlantedSts01"', "wJalrXUtnFEMIK7MDENGbPxRfiCYPlantedSts01"),
    "aws-sts-session": ('"SessionToken": "FwoGZXIvYXdzEPlantedSessionToken0123456789abcdef"',
                        "FwoGZXIvYXdzEPlantedSessionToken0123456789abcdef"),
    "slack-app-token": ("xapp-1-A0PLANTED1-1234567890-plantedappsecret0123", "plantedappsecret0123"),
    "stripe-webhook": ("whsec_PlantedWebhookSecret0123456789", "PlantedWebhookSecret0123456789"),
    "url-password-at": ("postgres://admin:Pl@ntedP/ass9@db.example.com/app", "Pl@ntedP/ass9"),
    "url-password-no-user": ("redis://:PlantedRedisPw77@cache.example.com:6379/0", "PlantedRedisPw77"),
    "db-pass": ("DB_PASS=PlantedDbPass01", "PlantedDbPass01"),
    "pgpassword": ("PGPASSWORD=PlantedPgPass02", "PlantedPgPass02"),
    "mysql-pwd": ("MYSQL_PWD=PlantedMyPwd03", "PlantedMyPwd03"),
    "encryption-key": ("ENCRYPTION_KEY=PlantedEncKey04", "PlantedEncKey04"),
    "twilio-auth": ("TWILIO_AUTH=PlantedTwilio05", "PlantedTwilio05"),
    "camel-access-token": ('accessToken: "PlantedAccessTok06"', "PlantedAccessTok06"),
    "camel-refresh-token": ("refreshToken=PlantedRefresh07", "PlantedRefresh07"),
    "camel-db-password": ("dbPassword: PlantedDbPw08", "PlantedDbPw08"),
    "camel-secret-key": ('secretKey = "PlantedSecretKey09"', "PlantedSecretKey09"),
    "netrc-password": ("machine api.example.com login me password PlantedNetrc10", "PlantedNetrc10"),
    "basic-auth": ("Authorization: Basic UGxhbnRlZEJhc2ljQXV0aDEx", "UGxhbnRlZEJhc2ljQXV0aDEx"),
    "auth-header": ("Authorization: token PlantedAuthHeader0123456789", "PlantedAuthHeader0123456789"),
    "npm-token": ("npm_PlantedNpmToken0123456789abcdefghijkl", "PlantedNpmToken0123456789"),
    "huggingface-token": ("hf_PlantedHuggingFace0123456789abcdefgh", "PlantedHuggingFace0123456789"),
    "sendgrid-key": ("SG.PlantedSendgrid0123.PlantedSendgridSecret0123456789ab", "PlantedSendgridSecret0123456789"),
    "google-oauth-secret": ("GOCSPX-PlantedGoogleOauth0123456789", "PlantedGoogleOauth0123456789"),
    "azure-storage-key": ("AccountKey=PlantedAzureKey0123456789abcdefghij==", "PlantedAzureKey0123456789"),
    "digitalocean-token": ("dop_v1_" + "a1b2c3d4e5f60718" * 4, "a1b2c3d4e5f60718" * 4),
    "digit-password": ('password = "80417392"', "80417392"),
    "multi-word-password": ('password = "correct horse planted staple"', "horse planted staple"),
    "sshpass": ("sshpass -p PlantedSshpass13 ssh deploy@host", "PlantedSshpass13"),
    "mysql-p": ("mysql -u root -pPlantedMysql14 shop", "PlantedMysql14"),
    "zero-width-split": ("ghp_Planted\u200bZeroWidth0123456789abcdefghijklmn", "ZeroWidth0123456789abcdefghijklmn"),
    "private-attr": ('<private reason="customer">PlantedPrivateAttr</private>', "PlantedPrivateAttr"),
    "export-token": ('export DEPLOY_TOKEN="PlantedDeployTok15"', "PlantedDeployTok15"),
    "password-assign": ('password = "PlantedPw16"', "PlantedPw16"),
    "api-key-yaml": ('api_key: "PlantedApiKey17"', "PlantedApiKey17"),
    # prefixed tokens whose gitleaks rules are dropped as slow, or that it lacks
    "square-token": ('"sq0atp-PlantedSquare0123456789ab"', "sq0atp-PlantedSquare0123456789ab"),
    "atlassian-token": ("ATATT3xFfGF0" + "PlantedAtlassian0123456789" * 7, "PlantedAtlassian0123456789"),
    "flyio-token": ("FLY=fo1_PlantedFlyio0123456789abcdefghijklmnopqrstu",
                    "PlantedFlyio0123456789abcdefghijklmnopqrstu"),
    "sourcegraph-token": ("sgp_a1b2c3d4e5f60718_" + "0123456789abcdef" * 2 + "01234567",
                          "0123456789abcdef0123456789abcdef01234567"),
    "planetscale-token": ("pscale_tkn_PlantedPlanetscale0123456789abcdef", "PlantedPlanetscale0123456789abcdef"),
    "perplexity-key": ("pplx-PlantedPerplexity0123456789abcdefghijklmnopqrstu", "PlantedPerplexity0123456789abcd"),
    "scalingo-token": ("tk-us-PlantedScalingo0123456789abcdefghijklmnopqrstuvw", "PlantedScalingo0123456789abcdef"),
    "docker-token": ("docker login -p dckr_pat_PlantedDocker0123456789ab", "PlantedDocker0123456789ab"),
    "terraform-token": ("TF_TOKEN=aBcDeFgHiJkLmN.atlasv1." + "PlantedTerraform0123456789" * 3,
                        "PlantedTerraform0123456789"),
    "telegram-bot-token": ("bot 5678901234:AAPlantedTelegram0123456789abcdefgh", "PlantedTelegram0123456789abcdefgh"),
    "discord-webhook": ("https://discord.com/api/webhooks/123456789012345678/PlantedDiscordHook0123456789abcdefgh",
                        "PlantedDiscordHook0123456789abcdefgh"),
    "url-signature": ("https://acct.blob.core.windows.net/c/f?sv=2022-11-02&sig=PlantedSasSig0123456789%3D",
                      "PlantedSasSig0123456789"),
    "mailgun-key": ("key-plantedmailgun0123456789abcdefgh", "plantedmailgun0123456789abcdefgh"),
    "password-hash": ("admin:$apr1$pl4nted$PlantedHtpasswdHash012", "PlantedHtpasswdHash012"),
    # a password given to a command as an argument
    "docker-login-p": ("docker login -u ci -p PlantedDockerLogin18 registry.example.com", "PlantedDockerLogin18"),
    "mysql-quoted-p": ("mysql -u root -p'sec ret PlantedMysqlQ19' shop", "sec ret PlantedMysqlQ19"),
    "http-password-flag": ("wget --http-password PlantedWgetPw20 https://example.com/f", "PlantedWgetPw20"),
    "htpasswd-b": ("htpasswd -b .htpasswd admin PlantedHtpasswd21", "PlantedHtpasswd21"),
    "redis-cli-a": ("redis-cli -h cache -a PlantedRedisCli22 ping", "PlantedRedisCli22"),
    "mongo-p": ("mongosh -u admin -p PlantedMongo23 admin", "PlantedMongo23"),
    "curl-u": ("curl -u deploy:PlantedCurlUser24 https://api.example.com", "PlantedCurlUser24"),
    "smbclient-u": ("smbclient //srv/share -U alice%PlantedSmb25", "PlantedSmb25"),
    "openssl-passin": ("openssl pkcs12 -in c.p12 -passin pass:PlantedOpenssl26 -nokeys", "PlantedOpenssl26"),
    "zip-p": ("zip -P PlantedZip27 out.zip notes.txt", "PlantedZip27"),
    "7z-p": ("7z a -pPlanted7z28 out.7z notes.txt", "Planted7z28"),
    "keytool-storepass": ("keytool -list -storepass PlantedKeytool29 -keystore k.jks", "PlantedKeytool29"),
    "ldapsearch-w": ("ldapsearch -x -D cn=admin -w PlantedLdap30 -b dc=x", "PlantedLdap30"),
    # last: a cookie header's value runs to the end of its line, and takes what follows it on that line
    "cookie": ("Cookie: session=PlantedCookieSess12", "PlantedCookieSess12"),
}
PLANT = " ".join(text for text, _ in SECRETS.values() if "Unclosed" not in text)
ONE_LINE = " ".join(text for kind, (text, _) in SECRETS.items() if "\n" not in text and "private" not in kind)
# each secret at the start of a line of a file the agent writes: serialised, a newline is `\n` before it
LINES = "\n".join(text for kind, (text, _) in SECRETS.items() if "Unclosed" not in text)
NEVER = [needle for _, needle in SECRETS.values()]
# a secret cut in two (a title cut at 80 characters) leaves a part: its first and last 12 characters never stay
PARTS = sorted({part for needle in NEVER if len(needle) >= 20 for part in (needle[:12], needle[-12:])})


def test_every_kind_of_our_own_rules_is_planted():
    assert set(OWN_KINDS) <= set(SECRETS)


def _esc(text: str) -> str:
    return json.dumps(text)[1:-1]


def _plant(home: Path) -> None:
    for harness, (base, sub) in HOMES.items():
        shutil.copytree(GENERATED / harness / sub, home / base / sub, dirs_exist_ok=True)
    for path in home.rglob("*.jsonl"):
        text = path.read_text("utf-8")
        text = text.replace("Create the setup file for this project", "Create the setup file for this project "
                            + _esc(PLANT))
        # tool inputs: on one line (Codex nests the arguments as a JSON string inside JSON)
        text = text.replace("echo harnesslink-e2e > setup.txt && ls", "echo harnesslink-e2e > setup.txt && ls # "
                            + ONE_LINE.replace('"', ""))
        text = text.replace("Done. The tool said:", "Done. " + _esc(PLANT) + " The tool said:")
        # a file the agent writes (Claude Code, pi, omp: a JSON string; Codex: inside its JSON arguments string)
        nested = ".codex" in path.parts
        text = text.replace("the fake model answers on 127.0.0.1", _esc(_esc(LINES)) if nested else _esc(LINES))
        # a prompt whose title (cut at 80 characters) cuts a token after 29 of its 36 characters
        text = text.replace("Create the setup file for this project", "Create the setup file " + "x" * 23 + " "
                            + SECRETS["github-token"][0] + " for this project")
        text = text.replace("Here is a longer explanation", "Here is a longer explanation "
                            + _esc(SECRETS["unclosed-private-span"][0]) + " ")
        lines = text.splitlines(keepends=True)
        lines += _states(path, lines)
        path.write_text(_an_hour_ago("".join(lines)), "utf-8")


RECORDED = "2026-11-29T20:14:30.000Z"  # just after the generated transcripts' last line


def _an_hour_ago(text: str) -> str:
    """The transcript's times moved so that RECORDED is an hour ago: the pending turn stays pending whatever day the
    test runs (a turn left waiting for a week is given up)."""
    shift = time.time() - 3600 - (clock.parse_iso(RECORDED) or 0.0)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z",
                  lambda m: clock.iso((clock.parse_iso(m.group()) or 0.0) + shift), text)


def _states(path: Path, lines: list[str]) -> list[str]:
    """Todos, a plan and a compaction carrying secrets, in each harness's own shape."""
    first = json.loads(lines[0] if '"session' in lines[0] else lines[1])
    ts = RECORDED
    todo = f"rotate {ONE_LINE}"
    if ".claude" in path.parts:
        sid = first.get("sessionId")
        tool = {"type": "assistant", "sessionId": sid, "cwd": first.get("cwd"), "timestamp": ts, "uuid": "u-todo-1",
                "isSidechain": False, "message": {"id": "m-todo", "role": "assistant", "content": [
                    {"type": "tool_use", "id": "toolu_todo", "name": "TodoWrite",
                     "input": {"todos": [{"content": todo, "status": "pending", "activeForm": todo}]}}]}}
        compact = {"type": "system", "subtype": "compact_boundary", "sessionId": sid, "cwd": first.get("cwd"),
                   "timestamp": ts, "uuid": "u-compact-1", "content": "Conversation compacted " + ONE_LINE}
        base = {"sessionId": sid, "cwd": first.get("cwd"), "timestamp": ts, "isSidechain": False}
        # a turn still waiting on its last tool, after todos and a task list (kept in the carried facts)
        task_call = dict(base, type="assistant", uuid="u-task-1", message={"id": "m-task", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_task", "name": "TaskCreate", "input": {"subject": todo}}]})
        task_done = dict(base, type="user", uuid="u-task-2", toolUseResult={"task": {"id": "7", "subject": todo}},
                         message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_task",
                                                               "content": "created"}]})
        pending_prompt = dict(base, type="user", uuid="u-open-1", message={"role": "user", "content": "Deploy " + PLANT})
        pending_call = dict(base, type="assistant", uuid="u-open-2", message={"id": "m-open", "role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_open", "name": "Bash", "input": {"command": "deploy # " + ONE_LINE}}]})
        return [json.dumps(x) + "\n" for x in (compact, pending_prompt, tool, task_call, task_done, pending_call)]
    if ".codex" in path.parts:
        plan = {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call", "name": "update_plan", "call_id": "call_plan",
            "arguments": json.dumps({"explanation": "plan " + PLANT, "plan": [{"step": todo, "status": "pending"}]})}}
        return [json.dumps(plan) + "\n"]
    last_id = json.loads(lines[-1]).get("id")
    todo_edit = {"type": "custom", "customType": "user_todo_edit", "data": {"todos": [{"content": todo, "status": "pending"}]},
                 "id": "todo0001", "parentId": last_id, "timestamp": ts}
    compaction = {"type": "compaction", "summary": "Summary " + PLANT, "id": "comp0001", "parentId": "todo0001",
                  "timestamp": ts}
    return [json.dumps(todo_edit) + "\n", json.dumps(compaction) + "\n"]


def _hook(event: str, harness: str, payload: dict) -> dict:
    answer = hooks.run([event, "--harness", harness], stdin=io.StringIO(json.dumps(payload))).answer
    return answer


def _every_byte(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _leaks(locs, isolated_home, monkeypatch, capsys, *, check: bool = True) -> list[tuple[str, str]]:
    """Plant, bank, run every hook, hand a session over, forget an entry; what of a secret is on disk."""
    _plant(isolated_home)
    autobank.widen_window(locs, 4000)
    later = time.time() + 3600
    for _ in range(10):
        if autobank.run_pass(locs, now=later).bytes_read == 0:
            break
    cwd = "/home/tester/project"
    for harness in HOMES:
        session = {"session_id": "sess-" + harness, "cwd": cwd, "prompt": "why did the setup fail? " + PLANT,
                   "last_assistant_message": "Done " + PLANT, "transcript_path": str(isolated_home / "none.jsonl")}
        for event in ("session-start", "user-prompt-submit", "stop", "pre-compact"):
            _hook(event, harness, session)
    # errors that quote what they were given: the log and the ledger's error rows
    log.error(locs, "could not parse " + PLANT, ValueError("bad value " + PLANT))
    ledger = open_ledger(locs)
    try:
        ledger.error("reader failed on " + PLANT, "codex", "/x")
    finally:
        ledger.close()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = main.main(["forget", "--session", PLANT.split()[4], "--yes"])  # fails: nothing matches
    err = capsys.readouterr().err
    assert code == 1 and not any(n in err for n in NEVER)
    claude = next(isolated_home.joinpath(".claude", "projects").rglob("*.jsonl"))
    resume.prepare(locs, claude_sessions.describe(claude), "codex")  # a handoff file
    forgotten = forget.select(locs, ids=[sorted(locs.memories.glob("*/bank/*.md"))[0].name],
                              projects=[p.name for p in locs.memories.iterdir()])
    forget.forget(locs, forgotten)  # forgotten.jsonl

    files = _every_byte(locs.agent_dir)
    if check:
        _check_the_world(locs, files)
    return [(str(p.relative_to(locs.agent_dir)), needle) for p, data in files.items() for needle in NEVER + PARTS
            if needle.encode() in data]


def _check_the_world(locs, files: dict[Path, bytes]) -> None:
    """What the corpus must have produced for the leak search to mean anything."""
    banked = list(locs.memories.glob("*/bank/*.md"))
    states = list(locs.memories.glob("*/state/*.md"))
    assert len({p.read_text().split("harness: ")[1].split()[0] for p in banked}) == 4, "every harness banked"
    assert states and any("[redacted:github-token]" in p.read_text() for p in states)
    assert any("[private]" in p.read_text() for p in banked)
    ledger = open_ledger(locs)
    try:
        carried = [r.carry_json for r in ledger.files("claude-code").values()]
        assert any("[redacted:github-token]" in c for c in carried), "the task list is carried, redacted"
        assert sum(r.open_turns for r in ledger.files("claude-code").values()) >= 1, "a turn is still pending"
    finally:
        ledger.close()
    assert any(p.name == "harness-autobank.db" for p in files) and any(p.name == "memory-index.db" for p in files)
    assert any(p.suffix == ".log" for p in files)
    assert any(p.parent.name == "handoffs" for p in files) and any(p.name == "forgotten.jsonl" for p in files)


def test_no_secret_reaches_any_file_we_write(locs, isolated_home, monkeypatch, capsys):
    leaks = _leaks(locs, isolated_home, monkeypatch, capsys)
    assert leaks == [], "\n".join(map(str, leaks))


# Every place that redacts on the way to disk; without any one of them, something leaks.
REDACTION_STEPS = [
    ("harnesslink_core.store.bank", "redact"),  # prompt, answer, title, cwd
    ("harnesslink_core.store.bank", "redact_value"),  # each value of a tool's input, before it is serialised
    ("harnesslink_core.store.state", "redact"),  # todos, plan, checkpoints, cwd in state files
    ("harnesslink_core.store.ledger", "redact_json"),  # the facts a read position carries
    ("harnesslink_core.banking.settle", "redact"),  # a checkpoint's title, before it is cut
]


@pytest.mark.slow
@pytest.mark.parametrize("module,name", REDACTION_STEPS, ids=lambda v: v.rsplit(".", 1)[-1])
def test_each_redaction_step_is_needed(module, name, locs, isolated_home, monkeypatch, capsys):
    monkeypatch.setattr(f"{module}.{name}", lambda value: value)
    assert _leaks(locs, isolated_home, monkeypatch, capsys, check=False), f"nothing leaked without {module}.{name}"




@pytest.mark.parametrize("text,expected", [
    ("keep <private>hide me</private> this", "keep [private] this"),
    ("a <PRIVATE>x</PRIVATE> b <private>y</private> c", "a [private] b [private] c"),
    ("start <private>everything after an unclosed tag\nacross lines", "start [private]"),
    ("no tags here", "no tags here"),
])
def test_private_spans(text, expected):
    from harnesslink_core.redact import redact

    assert redact(text) == expected


def test_a_token_in_the_folder_name_is_never_persisted_and_the_project_still_finds_its_memory(locs, isolated_home):
    from harnesslink_core.recall import index, query
    from harnesslink_core.store.scope import scope_for
    from tests.claude_builder import ClaudeSession

    token = "ghp_FolderToken0123456789abcdefghijklmnop"
    cwd = f"/home/dev/{token}/shop"
    s = ClaudeSession(isolated_home, cwd=cwd)
    s.turn("Why does the checkout page time out under load?", "The payment client had no timeout; it now "
           "gives up after five seconds and retries once. " * 3, tools=[("Bash", {"command": "pytest -x tests/checkout"})])
    s.flush()
    assert autobank.run_pass(locs).banked == 1
    projects = scope_for(locs, cwd)
    conn = index.connect(locs)
    try:
        index.sync(conn, locs, projects)
        assert query.search(conn, ["checkout", "timeout"], projects, limit=3), "the folder's own memory is found"
    finally:
        conn.close()
    files = _every_byte(locs.agent_dir)
    leaks = [str(p) for p, data in files.items() if p.name != "harness-autobank.db" and b"FolderToken0123" in data
             or b"FolderToken0123" in str(p).encode()]
    assert leaks == []
    # the ledger names the harness's own transcript by its path (which holds the folder's name, as the
    # harness wrote it on this disk); nothing else of it
    import sqlite3

    db = sqlite3.connect(locs.ledger_file)
    try:
        found = [(table, column) for table, in db.execute("SELECT name FROM sqlite_master WHERE type='table'")
                 for column in [c[1] for c in db.execute(f"PRAGMA table_info({table})")]
                 if db.execute(f"SELECT count(*) FROM {table} WHERE CAST({column} AS TEXT) LIKE '%FolderToken0123%'"
                               ).fetchone()[0]]
    finally:
        db.close()
    assert found == [("files", "path")]
