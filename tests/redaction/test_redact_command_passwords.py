"""A password given to a command as an argument never reaches the bank, the flag before it stays, and where
`-p` (or the like) is a port or a path the command is banked as it was typed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnesslink_core import main
from harnesslink_core.redact import redact
from harnesslink_core.store.scope import project_slug
from tests.claude_builder import ClaudeSession

CWD = "/home/dev/shop"
LONG = "Done: the command ran and the service answered as expected afterwards. " * 3

# name -> (the command an agent ran, its password)
COMMANDS = {
    "docker-login": ("docker login -u ci -p Dock3rLoginPw registry.example.com", "Dock3rLoginPw"),
    "docker-login-equals": ("docker login --username ci -p=Dock3rEqualsPw", "Dock3rEqualsPw"),
    "podman-login": ("podman login quay.io -u me -p P0dmanLoginPw", "P0dmanLoginPw"),
    "helm-registry-login": ("helm registry login r.example.com -u me -p H3lmLoginPw", "H3lmLoginPw"),
    "az-login": ("az login -u me@corp.example -p Az9LoginPassw", "Az9LoginPassw"),
    "long-flag-spaced": ("deploy --password L0ngFlagPassw", "L0ngFlagPassw"),
    "long-flag-equals": ("deploy --password=L0ngEqualsPw", "L0ngEqualsPw"),
    "long-flag-prefixed": ("wget --http-password Wg3tHttpPassw https://example.com/f", "Wg3tHttpPassw"),
    "long-flag-prefixed-equals": ("wget --ftp-password=Wg3tFtpPassw ftp://example.com/f", "Wg3tFtpPassw"),
    "long-flag-passphrase": ("gpg --batch --passphrase Gpg9Passphrase -d f.gpg", "Gpg9Passphrase"),
    "mysql-glued": ("mysql -u root -pMysq1GluedPw shop", "Mysq1GluedPw"),
    "mysql-single-quoted": ("mysql -u root -p'sec ret Mysq1Sq' shop", "sec ret Mysq1Sq"),
    "mysql-double-quoted": ('mysql -u root -p"sec ret Mysq1Dq" shop', "sec ret Mysq1Dq"),
    "mysqldump": ("mysqldump -u root -pDump9Passw shop > shop.sql", "Dump9Passw"),
    "mariadb-dump": ("mariadb-dump -u root -pMaria9Passw shop", "Maria9Passw"),
    "mysqladmin-password": ("mysqladmin -u root password N3wAdminPassw", "N3wAdminPassw"),
    "sshpass": ("sshpass -p Sshp4ssArgPw ssh deploy@host", "Sshp4ssArgPw"),
    "sshpass-glued": ("sshpass -pSshp4ssGluedPw ssh deploy@host", "Sshp4ssGluedPw"),
    "htpasswd-b": ("htpasswd -b /etc/nginx/.htpasswd admin Htp4sswdArgPw", "Htp4sswdArgPw"),
    "htpasswd-nb": ("htpasswd -nbB admin Htp4sswdNbPw | tee .htpasswd", "Htp4sswdNbPw"),
    "htpasswd-cost": ("htpasswd -B -C 10 -bc .htpasswd admin Htp4sswdCostPw", "Htp4sswdCostPw"),
    "redis-cli": ("redis-cli -h cache -p 6379 -a Red1sAuthPassw ping", "Red1sAuthPassw"),
    "mongo": ("mongo -u admin -p Mong0ShellPw admin", "Mong0ShellPw"),
    "mongosh": ("mongosh --username admin -p 'Mong0 Sh Pw' --authenticationDatabase admin", "Mong0 Sh Pw"),
    "mongodump": ("mongodump -u admin -p Mong0DumpPw --out /backup", "Mong0DumpPw"),
    "curl-user": ("curl -u deploy:Curl9UserPw https://api.example.com/v1", "Curl9UserPw"),
    "curl-user-long": ("curl --user 'deploy:Curl9 Long Pw' https://api.example.com/v1", "Curl9 Long Pw"),
    "curl-user-glued": ("curl -udeploy:Curl9GluedPw https://api.example.com/v1", "Curl9GluedPw"),
    "curl-proxy-user": ("curl --proxy-user me:Curl9ProxyPw -x proxy:3128 https://x.example", "Curl9ProxyPw"),
    "httpie-auth": ("http -a me:Http1eAuthPw https://api.example.com", "Http1eAuthPw"),
    "wget-password": ("wget --password=Wg3tPlainPw https://example.com/f", "Wg3tPlainPw"),
    "smbclient": ("smbclient //srv/share -U alice%Smb9ClientPw", "Smb9ClientPw"),
    "smbclient-domain-quoted": ("smbclient //srv/share -U 'CORP\\alice%Smb9 Dom Pw'", "Smb9 Dom Pw"),
    "lftp": ("lftp -u deploy,Lftp9UserPw sftp://files.example.com", "Lftp9UserPw"),
    "git-clone-url": ("git clone https://deploy:G1tCloneUrlPw@git.example.com/o/r.git", "G1tCloneUrlPw"),
    "pgpassword-env": ("PGPASSWORD=PgEnv9Passw psql -h db -U app", "PgEnv9Passw"),
    "openssl-passin": ("openssl pkcs12 -in cert.p12 -passin pass:Ossl9PassinPw -nokeys", "Ossl9PassinPw"),
    "openssl-passout": ("openssl genrsa -aes256 -passout pass:Ossl9PassoutPw 2048", "Ossl9PassoutPw"),
    "openssl-passin-quoted": ("openssl rsa -in k.pem -passin 'pass:Ossl9 Quoted Pw'", "Ossl9 Quoted Pw"),
    "openssl-k": ("openssl enc -aes-256-cbc -k Ossl9EncKeyPw -in f -out f.enc", "Ossl9EncKeyPw"),
    "zip": ("zip -P Z1pArchivePw out.zip notes.txt", "Z1pArchivePw"),
    "unzip": ("unzip -P Unz1pArchivePw out.zip", "Unz1pArchivePw"),
    "7z": ("7z a -pSev3nZipPw out.7z notes.txt", "Sev3nZipPw"),
    "7z-quoted": ("7z x -p'Sev3n Quoted Pw' out.7z", "Sev3n Quoted Pw"),
    "rar": ("rar a -hpR4rHeaderPw out.rar notes.txt", "R4rHeaderPw"),
    "keytool-storepass": ("keytool -list -keystore k.jks -storepass K3ytoolStorePw", "K3ytoolStorePw"),
    "keytool-keypass": ("keytool -genkey -alias a -keypass K3ytoolKeyPw -keystore k.jks", "K3ytoolKeyPw"),
    "ldapsearch": ("ldapsearch -x -D cn=admin,dc=example,dc=org -w Ld4pSearchPw -b dc=example,dc=org",
                   "Ld4pSearchPw"),
    "net-use-after-user": ("net use Z: \\\\fileserver\\share /user:CORP\\alice N3tUseAfterPw", "N3tUseAfterPw"),
    "net-use-after-share": ("net use \\\\fileserver\\share N3tUseSharePw /user:alice", "N3tUseSharePw"),
    "sqlcmd": ("sqlcmd -S db.example.com -U sa -P 'Sq1cmd!Passw' -Q 'select 1'", "Sq1cmd!Passw"),
    "sqlplus": ("sqlplus -s scott/Sq1plusTigerPw@//db.example.com:1521/orcl", "Sq1plusTigerPw"),
    "plink": ("plink -ssh -pw Pl1nkPuttyPw admin@host", "Pl1nkPuttyPw"),
    "ssh-keygen": ("ssh-keygen -t ed25519 -N 'Ssh9 Key Phrase' -f ~/.ssh/deploy", "Ssh9 Key Phrase"),
    "mosquitto": ("mosquitto_pub -h broker -u iot -P Mqtt9BrokerPw -t t -m hi", "Mqtt9BrokerPw"),
    "nmcli": ("nmcli dev wifi connect HomeNet password W1fiHomePassw", "W1fiHomePassw"),
    "sshpass-env": ("SSHPASS=Sshp4ssEnvPw sshpass -e ssh deploy@host", "Sshp4ssEnvPw"),
    "aws-configure": ("aws configure set aws_secret_access_key Aws9ConfigureSecretKey", "Aws9ConfigureSecretKey"),
    "aws-configure-profile": ("aws configure set default.aws_session_token Aws9SessionTok --profile ci",
                              "Aws9SessionTok"),
    "docker-login-user-docker": ("docker login -u docker -p Dock3rUserDockerPw", "Dock3rUserDockerPw"),
    "mysql-host-mysql": ("/usr/bin/mysql -h mysql -u root -pMysq1HostPw", "Mysq1HostPw"),
}

# Where the same letters are a port, a path or a plain switch: banked as typed.
LOOK_ALIKES = [
    "ssh -p 2222 deploy@host", "scp -P 2222 out.zip host:/tmp", "mkdir -p build/out/assets", "cp -p notes.txt /tmp/",
    "docker run -p 8080:80 nginx", "docker compose up -d && docker ps -a", "python -p tests", "git add -p src/app.py",
    "python -m pytest -q -p no:cacheprovider", "ps -p 1234 -o pid,cmd", "kubectl logs -p api-7c9d", "git log -p -3",
    "docker login -u ci --password-stdin registry.example.com", "docker login -u ci -p $DOCKER_PASSWORD",
    'docker login -u ci -p "$(cat /run/secrets/registry)"', "mysql -u root -p < dump.sql",
    "mysql -u root -p -e 'show databases'", "redis-cli -p 6379 ping", "ssh-keygen -t ed25519 -N '' -f key",
    'ssh-keygen -t ed25519 -N "" -f key', "curl -u deploy https://api.example.com", 'curl -u "$USER:$PASS" https://x',
    "htpasswd -c .htpasswd admin", "net use Z: \\\\fileserver\\share /user:alice *", "sqlplus / as sysdba",
    "openssl rsa -passin env:KEY_PASS -in k.pem", "openssl req -new -key k.pem -out r.csr", "7z a -p out.7z notes",
    "unrar x -p- old.rar", "ansible-playbook --ask-become-pass site.yml", "psql --no-password -h db app",
    "keytool -list -storepass:env STORE_PASS -keystore k.jks", "zip -r out.zip dist && scp -P 2222 out.zip host:",
    "python train.py --max-tokens 4096", "gh auth login --with-token < token.txt", "echo pw | sudo -S apt update",
    "aws configure get aws_secret_access_key", "COMPASS=north ./run", "mysqladmin -u root password",
]


def _bank(home: Path, commands: list[str]) -> dict[Path, bytes]:
    """Each command run in a turn of its own (typed in the prompt, run by the shell tool, quoted in the
    answer), banked by `harnesslink autobank`; every byte under the agent dir."""
    session = ClaudeSession(home, cwd=CWD)
    for command in commands:
        session.turn(f"Please run `{command}` for me", f"I ran `{command}`. {LONG}",
                     tools=[("Bash", {"command": command})])
    session.flush()
    assert main.main(["autobank"]) == 0
    return {p: p.read_bytes() for p in (home / ".superpi" / "agent").rglob("*") if p.is_file()}


def _bank_text(locs) -> str:
    return "".join(p.read_text("utf-8") for p in sorted((locs.memories / project_slug(CWD) / "bank").glob("*.md")))


def test_no_command_password_reaches_any_file_we_write(locs, isolated_home) -> None:
    files = _bank(isolated_home, [command for command, _ in COMMANDS.values()])
    leaks = [(name, str(path)) for name, (_, secret) in COMMANDS.items() for path, data in files.items()
             if secret.encode() in data or json.dumps(secret)[1:-1].encode() in data]
    assert leaks == []
    banked = _bank_text(locs)
    assert banked.count("\nid: ") == len(COMMANDS), "every turn banked"
    # the command up to its password stays, the flag too: `-p [redacted:cli-secret]`
    kept = {name: command[:command.index(secret)].rstrip("'\"") for name, (command, secret) in COMMANDS.items()}
    lost = [name for name, head in kept.items() if head + "[redacted:" not in banked.replace("'[redacted:", "[redacted:")
            .replace('"[redacted:', "[redacted:")]
    assert lost == []


def test_where_the_flag_is_a_port_or_a_path_the_command_is_banked_as_typed(locs, isolated_home) -> None:
    _bank(isolated_home, LOOK_ALIKES)
    banked = _bank_text(locs)
    assert "[redacted:" not in banked
    assert [c for c in LOOK_ALIKES if f"Please run `{c}` for me" not in banked] == []


@pytest.mark.parametrize("name", ["docker-login", "curl-user", "openssl-passin", "htpasswd-b",
                                  "net-use-after-user"])
def test_a_password_split_over_a_json_escaped_line_is_still_found(name: str) -> None:
    command, secret = COMMANDS[name]
    escaped = json.dumps({"command": "cd /srv\n" + command + " && echo \"done\""})
    assert secret not in redact(escaped) and json.dumps(secret)[1:-1] not in redact(escaped)
