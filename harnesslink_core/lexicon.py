"""Related developer terms, so a prompt in other words still finds the turn.

A user asks days later in their own words: "popup" for the modal, "graphs" for
the charts, "no internet" for offline, "bill" for cost. Each line below is one
group of words (or `multi_word` phrases) that a developer uses for the same
thing or the same topic; a prompt word in a group also searches the others.

Kept small and general on purpose: every extra word widens the search, and the
relevance floor in `matches` still has to be met by what the entry says. The
porter stemmer of the index takes care of plurals and verb forms, so each word
is listed once. Phrases of two words are also recognised in the prompt itself
("profile picture", "dark mode").

This module is on the prompt hook's path: a string parsed once, no imports.
"""

from __future__ import annotations

GROUPS = """
popup modal dialog overlay lightbox
dropdown select combobox picker
tooltip hover popover
sidebar side_menu left_menu navigation_menu nav menu
button btn
graph chart plot diagram visualisation visualization
image picture photo img thumbnail
avatar profile_picture profile_photo profile_image
icon glyph
dark_mode dark_theme night_mode dark_scheme
theme colour_scheme color_scheme styling
style css stylesheet styles classes tailwind
font typeface typography
layout grid flexbox
animation spinner progress_bar loader loading_indicator
keyboard key shortcut hotkey keybinding
focus tab_order focus_trap
accessibility a11y screen_reader aria
snippet code_block code_sample
readable legible unreadable illegible
translation i18n localisation localization locale
rtl right_to_left
form input field
validation validate validator
error_message error_text
internet network connection connectivity offline online wifi
slow latency sluggish lag laggy performance perf
peak busy rush_hour high_traffic high_load
fast faster speed quick
cold_start warm_up warmup lazy_load lazy_loading
hang hangs stuck freeze frozen unresponsive
timeout time_out timed_out timing_out times_out deadline
crash crashes segfault panic
retry retries backoff
cache caching memoize memoise
memory ram rss heap oom out_of_memory
cpu processor
disk storage volume
gpu cuda vram graphics_card video_card
bill billing cost costs spend spending expensive price pricing invoice
quote quotes rate rates estimate
money payment pay charge
discount coupon promo promo_code voucher
cart basket
checkout purchase
refund chargeback
shipping delivery shipment carrier postage
address location
customer client buyer
subscription plan membership
email mail
notification push_notification alert alerts
alarm alert pager paging
monitoring observability metrics dashboard
log logs logging logger
trace tracing span
upload uploading file_upload
download downloading
login sign_in signing_in signin log_in logon logged_in auth authentication
logout sign_out signout log_out
signup sign_up register registration
password passphrase credential credentials
token jwt bearer
secret secrets credential access_key api_key long_lived_key
session cookie
permission permissions access authorization authorisation acl
role iam policy
oidc sso saml openid
ci pipeline github_actions workflow gitlab_ci jenkins
cd continuous_delivery continuous_deployment
deploy deployment deployed rollout release production
production prod live
staging preview stage
environment env
pr pull_request merge_request mr
commit git
branch branches
test tests testing spec
flaky intermittent nondeterministic random_failure
lint linter linting clippy eslint ruff
rust rustc rustup toolchain cargo
format formatter formatting prettier rustfmt black
typecheck type_check mypy tsc typescript
bundle bundler webpack vite rollup esbuild
build compile compilation
binary binaries executable executables artifact artifacts
cross_compile cross_compilation arm arm64 aarch64
mac macos darwin osx
linux ubuntu debian
windows win32 msi
package packaging dependency dependencies deps
upgrade update bump
version versions versioning
config configuration settings preferences options
cli command_line terminal shell console tty
completion completions autocomplete tab_completion shell_completion
flag option switch argument arg
subcommand command
output stdout print printing
stderr error_output
pipe piped redirect redirected
json machine_readable structured_output
yaml yml
csv spreadsheet
help usage manpage
docs documentation doc
link links url urls href
broken_link dead_link 404
redirect redirects alias aliases
search lookup
index indexing reindex
sort sorting sorted alphabetical alphabetically
page pagination paging paginate
table grid datagrid
row rows record records
column columns field fields
duplicate duplicates dupes twice double repeated
missing lost loses lose disappear disappears vanish dropped
missing not_found nonexistent doesn't_exist does_not_exist no_such_file
small smaller tiny little shrink
large big bigger huge giant massive oversized
stale outdated old cached
database db postgres postgresql mysql sqlite
migration migrations schema_change
schema schemas
query queries sql
backup backups snapshot snapshots
bucket s3 object_storage blob_storage
dns hostname hostnames domain resolve resolver resolution
certificate cert certs tls ssl https
ingress load_balancer loadbalancer alb
cluster kubernetes k8s eks gke aks
pod pods container containers
node nodes worker_node node_group
readiness liveness health healthcheck probe
vpc subnet subnets
firewall network_policy egress ingress_rule security_group
terraform tf iac infrastructure
docker dockerfile container_image
queue job jobs task tasks worker workers celery
cron scheduled nightly daily schedule
dag airflow orchestration
stream streaming kafka topic consumer consumers reader readers
lag backlog behind falling_behind
spark pyspark
parquet columnar
partition partitioning partitioned sharding
warehouse snowflake bigquery redshift
dbt data_model
ltv lifetime_value clv
timezone time_zone utc midnight
backfill reprocess rerun re_run
ingestion ingest loader etl
inference prediction predictions predict serving
training train trained fit
eval evaluation evaluate metrics accuracy benchmark
dataset data_set split
tokenizer tokenization tokens token_ids
embedding embeddings vector vectors
quantize quantization quantized int8 8_bit fp16 half_precision
onnx onnxruntime
batch batch_size batches
fine_tune finetune fine_tuning
accuracy precision recall f1 score
deep_link deeplink universal_link app_link
push_notification fcm apns
rotate rotation orientation landscape portrait sideways
android google_play
ios iphone ipad apple xcode
signing code_signing provisioning certificate_signing
apple_sign_in sign_in_with_apple apple_login
sync synchronise synchronize syncing
websocket websockets socket realtime
api endpoint endpoints route routes
rate_limit rate_limiting throttle throttling
webhook webhooks callback
idempotent idempotency dedupe deduplicate
tax vat
currency currencies dollars euros eur usd
refresh reload f5
router routing route
state store redux zustand
hook hooks
component components widget widgets
storybook stories
500 server_error internal_server_error
error errors exception exceptions failure
""".strip().splitlines()

_INDEX: dict[str, tuple[int, ...]] | None = None
_PHRASES: frozenset[str] = frozenset()


def _groups() -> list[list[str]]:
    return [[w.replace("_", " ") for w in line.split()] for line in GROUPS if line.strip()]


def _build() -> dict[str, tuple[int, ...]]:
    global _PHRASES
    index: dict[str, list[int]] = {}
    phrases = set()
    for n, group in enumerate(_groups()):
        for word in group:
            if " " in word:
                phrases.add(word)
            for key in bare_forms(word):
                if n not in index.setdefault(key, []):
                    index[key].append(n)
    _PHRASES = frozenset(phrases)
    return {k: tuple(v) for k, v in index.items()}


def bare_forms(word: str) -> list[str]:
    """The word and its likely bare forms: enough to find `graphs` under `graph`, `showing` under `show`."""
    keys = [word]
    for suffix, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and " " not in word:
            keys.append(word[: -len(suffix)] + repl)
    return keys


def related(word: str) -> list[str]:
    """Other words (or phrases) for `word`, nearest first; [] when the lexicon has none."""
    global _INDEX
    if _INDEX is None:
        _INDEX = _build()
    groups: list[int] = []
    for key in bare_forms(word):
        for n in _INDEX.get(key, ()):
            if n not in groups:
                groups.append(n)
    if not groups:
        return []
    all_groups = _groups_cache()
    out: list[str] = []
    seen = set(bare_forms(word))  # the index stems: `loses` after `lose` would add nothing
    for n in groups:
        for other in all_groups[n]:
            forms = bare_forms(other)
            if seen.isdisjoint(forms):
                out.append(other)
                seen.update(forms)
    return out


def is_phrase(words: str) -> bool:
    """Whether these two words, space-separated, are a phrase of the lexicon."""
    global _INDEX
    if _INDEX is None:
        _INDEX = _build()
    return words in _PHRASES


_GROUPS_CACHE: list[list[str]] | None = None


def _groups_cache() -> list[list[str]]:
    global _GROUPS_CACHE
    if _GROUPS_CACHE is None:
        _GROUPS_CACHE = _groups()
    return _GROUPS_CACHE
