"""What the write firewall must catch: secrets of many vendors and formats, and PII in
several countries' formats, each inside a note as a person would write it.

Secret values are made here from a seeded generator (no real credential, and nothing a
repository scanner would take for one). `value` is the part that must not survive: a
secret blocks the write, a PII item is redacted. `chunked`: a person may write the value
in groups of four ("AKIA IOSF ODNN 7EXA MPLE", "ghp_1a2B 3c4D ...").
"""

from __future__ import annotations

import base64
import random
import re
import string
from dataclasses import dataclass

_rng = random.Random(20240607)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase
B64 = ALNUM + "+/"


def rand(n: int, alphabet: str = ALNUM) -> str:
    """n random characters; the last a digit when the alphabet has digits (a chunked key's
    tail then reads as part of it, not as a word)."""
    body = "".join(_rng.choice(alphabet) for _ in range(n))
    digits = [c for c in alphabet if c.isdigit()]
    return body[:-1] + _rng.choice(digits) if digits and n else body


@dataclass(frozen=True)
class Item:
    kind: str
    text: str
    value: str
    chunked: bool = False


def _item(kind: str, template: str, value: str, chunked: bool = False) -> Item:
    return Item(kind, template.format(v=value), value, chunked)


def _pem(label: str) -> str:
    body = "\n".join(rand(64, B64) for _ in range(4))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _jwt() -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    body = base64.urlsafe_b64encode(b'{"sub":"1234567890","name":"Ann"}').decode().rstrip("=")
    return f"{head}.{body}.{rand(43, ALNUM + '-_')}"


_AWS_SECRET = rand(40, ALNUM + "/+")
SECRETS: tuple[Item, ...] = (
    _item(
        "AWS access key id",
        "my aws key is {v} for the backup job",
        "AKIA" + rand(16, string.ascii_uppercase + string.digits),
        True,
    ),
    _item(
        "AWS temporary key id",
        "temp creds: {v}",
        "ASIA" + rand(16, string.ascii_uppercase + string.digits),
        True,
    ),
    _item("AWS secret key, quoted", 'aws_secret_access_key = "{v}"', _AWS_SECRET),
    _item("AWS secret key, unquoted", "aws_secret_access_key = {v}", rand(40, ALNUM + "/+")),
    _item("AWS secret key, env line", "AWS_SECRET_ACCESS_KEY={v}", rand(40, ALNUM + "/+")),
    _item("GitHub classic PAT", "push with {v} please", "ghp_" + rand(36), True),
    _item("GitHub OAuth token", "oauth token {v}", "gho_" + rand(36), True),
    _item("GitHub app token", "installation token {v}", "ghs_" + rand(36), True),
    _item("GitHub refresh token", "refresh {v}", "ghr_" + rand(36), True),
    _item(
        "GitHub fine-grained PAT",
        "new token {v} expires in May",
        "github_pat_" + rand(22) + "_" + rand(59),
    ),
    _item("GitLab PAT", "gitlab token {v}", "glpat-" + rand(20), True),
    _item("GitLab runner token", "register with {v}", "glrt-" + rand(20)),
    _item(
        "Slack bot token",
        "bot token {v}",
        "xoxb-"
        + rand(12, string.digits)
        + "-"
        + rand(13, string.digits)
        + "-"
        + rand(24, string.ascii_lowercase + string.digits),
    ),
    _item(
        "Slack user token",
        "user token {v}",
        "xoxp-"
        + rand(12, string.digits)
        + "-"
        + rand(12, string.digits)
        + "-"
        + rand(13, string.digits)
        + "-"
        + rand(32, HEX),
    ),
    _item(
        "Slack webhook",
        "post alerts to {v}",
        f"https://hooks.slack.com/services/T{rand(8, UPPER)}/B{rand(10, UPPER)}/{rand(24)}",
    ),
    _item(
        "Slack app token",
        "socket mode: {v}",
        f"xapp-1-A{rand(10, UPPER + string.digits)}-{rand(13, string.digits)}-{rand(64, HEX)}",
    ),
    _item("Stripe live secret key", "stripe {v}", "sk_live_" + rand(24), True),
    _item("Stripe restricted key", "restricted {v}", "rk_live_" + rand(24)),
    _item("Stripe test key", "test mode key {v}", "sk_test_" + rand(24)),
    _item("Stripe webhook secret", "webhook signing secret {v}", "whsec_" + rand(32)),
    _item("Twilio API key", "twilio key {v}", "SK" + rand(32, HEX)),
    _item("SendGrid key", "sendgrid {v}", f"SG.{rand(22, ALNUM + '-_')}.{rand(43, ALNUM + '-_')}"),
    _item("Mailchimp key", "mailchimp {v}", rand(32, HEX) + "-us12"),
    _item("Mailgun key", "mailgun {v}", "key-" + rand(32, HEX)),
    _item("npm token", "publish with {v}", "npm_" + rand(36), True),
    _item(".npmrc auth token", "in .npmrc: //registry.npmjs.org/:_authToken={v}", rand(40, B64)),
    _item("PyPI token", "twine password {v}", "pypi-AgEIcHlwaS5vcmc" + rand(80, ALNUM + "-_")),
    _item("Hugging Face token", "HF token {v}", "hf_" + rand(34, string.ascii_letters), True),
    _item("OpenAI project key", "export key {v}", "sk-proj-" + rand(48, ALNUM + "-_"), True),
    _item("OpenAI legacy key", "old key {v}", "sk-" + rand(20) + "T3BlbkFJ" + rand(20)),
    _item("Anthropic key", "use {v} for claude", "sk-ant-api03-" + rand(40, ALNUM + "-_"), True),
    _item("Google API key", "maps key {v}", "AIza" + rand(35, ALNUM + "-_"), True),
    _item("Google OAuth client secret", "client secret {v}", "GOCSPX-" + rand(28)),
    _item("Google OAuth access token", "access token {v}", "ya29." + rand(60, ALNUM + "-_")),
    _item("Discord bot token", "discord {v}", "M" + rand(23) + "." + rand(6) + "." + rand(27)),
    _item(
        "Discord webhook",
        "hook {v}",
        f"https://discord.com/api/webhooks/{rand(18, string.digits)}/{rand(68, ALNUM + '-_')}",
    ),
    _item(
        "Telegram bot token",
        "telegram bot {v}",
        rand(9, string.digits) + ":AA" + rand(33, ALNUM + "-_"),
    ),
    _item("JWT", "session {v}", _jwt()),
    _item("RSA private key", "deploy key:\n{v}\nthanks", _pem("RSA PRIVATE KEY")),
    _item("EC private key", "{v}", _pem("EC PRIVATE KEY")),
    _item("OpenSSH private key", "id_ed25519:\n{v}", _pem("OPENSSH PRIVATE KEY")),
    _item("PGP private key", "{v}", _pem("PGP PRIVATE KEY BLOCK")),
    _item("PKCS#8 private key", "key.pem is {v}", _pem("PRIVATE KEY")),
    _item(
        "Azure storage account key",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={v};EndpointSuffix=core.windows.net",
        rand(86, B64) + "==",
    ),
    _item(
        "Azure SAS signature",
        "https://acme.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={v}",
        rand(43, ALNUM) + "%3D",
    ),
    _item(
        "Azure Service Bus key",
        "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey={v}",
        rand(43, B64) + "=",
    ),
    _item(
        "Password in a database URL",
        "db at postgres://admin:{v}@db.example.com/prod",
        "s3cret" + rand(8),
    ),
    _item("Password in a MongoDB URL", "mongodb+srv://app:{v}@cluster0.example.net/test", rand(16)),
    _item(
        "Authorization Bearer header",
        "curl -H 'Authorization: Bearer {v}' https://api.example.com",
        rand(40, ALNUM + "._-"),
    ),
    _item(
        "Authorization Basic header",
        "Authorization: Basic {v}",
        base64.b64encode(b"ann:" + rand(12).encode()).decode(),
    ),
    _item("Bearer token in prose", "call the API with Bearer {v} from now on", rand(32)),
    _item("password: line", "password: {v}", "hunter2"),
    _item("YAML password", "db:\n  host: db.internal\n  password: {v}\n", "Xk9-pass-" + rand(6)),
    _item("password in prose", "my password is {v} for the wifi", "Tr0ub4dor&3"),
    _item("wifi password in prose", "the wifi password for the cabin is {v}", "BlueFox-2024"),
    _item("password assignment, quoted", "password = '{v}'", "hunter2hunter2"),
    _item("JSON password", '{{"user": "ann", "password": "{v}"}}', rand(14)),
    _item("API_KEY= line", "API_KEY={v}", rand(32)),
    _item("TOKEN= line", "TOKEN={v}", rand(40)),
    _item("SECRET= line", "SECRET={v}", rand(24)),
    _item("DB_PASSWORD= line", "DB_PASSWORD={v}", rand(18)),
    _item("api_key: line", "api_key: {v}", rand(32)),
    _item("client_secret: line", "client_secret: {v}", rand(40)),
    _item("Shopify token", "shopify {v}", "shpat_" + rand(32, HEX)),
    _item("DigitalOcean token", "doctl token {v}", "dop_v1_" + rand(64, HEX)),
    _item("Vault token", "VAULT_ADDR set, token {v}", "hvs." + rand(24)),
    _item("Doppler token", "doppler {v}", "dp.pt." + rand(43)),
    _item("Databricks token", "databricks {v}", "dapi" + rand(32, HEX)),
    _item("Linear API key", "linear {v}", "lin_api_" + rand(40)),
    _item("Notion token", "notion {v}", "ntn_" + rand(46)),
    _item("Postman key", "postman {v}", f"PMAK-{rand(24, HEX)}-{rand(34, HEX)}"),
    _item(
        "New Relic key", "newrelic {v}", "NRAK-" + rand(27, string.ascii_uppercase + string.digits)
    ),
    _item("Docker Hub token", "docker login -p {v}", "dckr_pat_" + rand(27)),
    _item("Grafana service token", "grafana {v}", f"glsa_{rand(32)}_{rand(8, HEX)}"),
    _item("Supabase token", "supabase {v}", "sbp_" + rand(40, HEX)),
    _item("PlanetScale password", "pscale {v}", "pscale_pw_" + rand(43)),
    _item("Fly.io token", "fly {v}", "fo1_" + rand(43)),
    _item("Pulumi token", "pulumi {v}", "pul-" + rand(40, HEX)),
    _item("RubyGems key", "gem push key {v}", "rubygems_" + rand(48, HEX)),
    _item(
        "age secret key",
        "age key {v}",
        "AGE-SECRET-KEY-1" + rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
    ),
    _item("Atlassian API token", "jira token {v}", "ATATT3" + rand(180, ALNUM + "_-=")),
    _item("Figma token", "figma {v}", "figd_" + rand(40)),
    _item("Sentry token", "sentry {v}", "sntrys_" + rand(60)),
    _item("Terraform Cloud token", "tfc {v}", f"{rand(14)}.atlasv1.{rand(67)}"),
    _item("Square OAuth secret", "square {v}", "sq0csp-" + rand(43, ALNUM + "-_")),
    _item("Artifactory key", "artifactory {v} ", "AKC" + rand(70)),
    _item("IBM Cloud IAM key", "ibm_cloud_iam_key = {v}", rand(44, ALNUM + "_-")),
)

# PII: national and international formats of several countries. Values that carry a
# checksum are the libraries' own documented examples (they pass the check, and belong to
# no one).
PII: tuple[Item, ...] = (
    Item("email", "write to ann.lee+pcm@example.org today", "ann.lee+pcm@example.org"),
    Item("US phone (415) 555-2671", "Call Bob at (415) 555-2671 after six", "(415) 555-2671"),
    Item("US phone with dots", "office line 415.555.2671, ask for Ann", "415.555.2671"),
    Item("US phone +1", "cell +1 415 555 2671", "+1 415 555 2671"),
    Item("UK landline, national", "ring 020 7946 0958 tonight", "020 7946 0958"),
    Item("UK mobile, national", "her mobile is 07911 123456", "07911 123456"),
    Item("UK mobile, international", "whatsapp +44 7911 123456", "+44 7911 123456"),
    Item("DE landline, national", "Büro: 030 12345678", "030 12345678"),
    Item("DE mobile, national", "Handy 0151 23456789 abends", "0151 23456789"),
    Item("DE landline, international", "Berlin office +49 30 12345678", "+49 30 12345678"),
    Item("FR landline, national", "appelle le 01 23 45 67 89", "01 23 45 67 89"),
    Item("FR mobile, dotted", "portable 06.12.34.56.78", "06.12.34.56.78"),
    Item("JP landline, national", "Tokyo office 03-1234-5678", "03-1234-5678"),
    Item("JP mobile, national", "keitai 090-1234-5678", "090-1234-5678"),
    Item("IN mobile, national", "call Priya on 98765 43210", "98765 43210"),
    Item("IN mobile, international", "Priya: +91 98765 43210", "+91 98765 43210"),
    Item("AU landline, national", "Sydney (02) 9876 5432", "(02) 9876 5432"),
    Item("ES mobile, national", "llámame al 612 345 678", "612 345 678"),
    Item("IT mobile, national", "cellulare 347 123 4567", "347 123 4567"),
    Item("BR mobile, national", "celular (11) 91234-5678", "(11) 91234-5678"),
    Item("US SSN", "SSN 536-22-8741 on the form", "536-22-8741"),
    Item("US SSN without dashes", "my social security number is 536228741", "536228741"),
    Item("US ITIN", "ITIN 912-70-3456", "912-70-3456"),
    Item("Visa card", "card 4111 1111 1111 1111 exp 12/27", "4111 1111 1111 1111"),
    Item("Mastercard", "mc 5555-5555-5555-4444", "5555-5555-5555-4444"),
    Item("Amex card", "amex 378282246310005", "378282246310005"),
    Item(
        "IBAN DE", "IBAN DE89 3704 0044 0532 0130 00 BIC COBADEFFXXX", "DE89 3704 0044 0532 0130 00"
    ),
    Item("IBAN GB", "pay GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32"),
    Item("IBAN FR compact", "RIB FR1420041010050500013M02606", "FR1420041010050500013M02606"),
    Item("UK NI number", "NI number AB 12 34 56 C", "AB 12 34 56 C"),
    Item("UK NHS number", "NHS number 943 476 5870", "943 476 5870"),
    Item("FR NIR", "numéro de sécu 2 95 10 99 126 111 93", "2 95 10 99 126 111 93"),
    Item("DE tax id", "Steuer-ID 36 574 261 809", "36 574 261 809"),
    Item("IN Aadhaar", "Aadhaar 2341 2341 2346", "2341 2341 2346"),
    Item("IN PAN", "PAN ACUPA7085R", "ACUPA7085R"),
    Item("JP My Number", "My Number: 6214 9832 0257", "6214 9832 0257"),
    Item("ES DNI", "DNI 54362315-K", "54362315-K"),
    Item("ES NIE", "NIE X-2482300-W", "X-2482300-W"),
    Item("IT codice fiscale", "CF RCCMNL83S18D969H", "RCCMNL83S18D969H"),
    Item("NL BSN", "BSN 1112.22.333", "1112.22.333"),
    Item("BR CPF", "CPF 390.533.447-05", "390.533.447-05"),
    Item("CN resident id", "身份证 360426199101010071", "360426199101010071"),
    Item("KR resident number", "RRN 971013-9019902", "971013-9019902"),
    Item("CA SIN", "SIN 123 456 782", "123 456 782"),
    Item("US passport", "passport number 912345678, valid to 2031", "912345678"),
    Item("DE passport", "Reisepass C01X00T47", "C01X00T47"),
    Item("UK driving licence", "driver's license MORGA753116SM9IJ", "MORGA753116SM9IJ"),
    Item("date of birth, ISO", "DOB: 1985-03-14", "1985-03-14"),
    Item("date of birth, words", "she was born on 14 March 1985 in Leeds", "14 March 1985"),
    Item("date of birth, US", "date of birth 03/14/1985", "03/14/1985"),
    Item("IPv4 address", "the NAS is at 203.0.113.42 on the LAN", "203.0.113.42"),
    Item(
        "IPv6 address",
        "server 2001:db8:85a3::8a2e:370:7334 answers",
        "2001:db8:85a3::8a2e:370:7334",
    ),
)

# Invisible characters a paste or an editor leaves inside a value.
INVISIBLE = {"zero-width space": "\u200b", "zero-width joiner": "\u200d", "soft hyphen": "\u00ad"}


def split(value: str, mark: str) -> str:
    """`value` with `mark` after its second character and in its middle."""
    mid = len(value) // 2
    return value[:2] + mark + value[2:mid] + mark + value[mid:]


_PREFIX = re.compile(r"^[A-Za-z0-9]+(?:[_-][A-Za-z0-9]+)*?[_-]")


def chunked(value: str) -> str:
    """`value` in groups of four after its vendor prefix ("ghp_", "sk-ant-api03-"), which
    stays on the first group, as people copy keys out by hand."""
    prefix = m.group() if (m := _PREFIX.match(value)) and len(m.group()) < len(value) // 2 else ""
    body = value[len(prefix) :]
    return prefix + " ".join(body[i : i + 4] for i in range(0, len(body), 4))


# What people put between the groups of a key they copy out by hand.
SEPARATORS = {
    "space": " ",
    "two spaces": "  ",
    "dash": "-",
    "spaced dash": " - ",
    "dot": ".",
    "line break": "\n",
    "zero-width space": "\u200b",
}
# Unequal group sizes, repeated over a key's body: no two neighbours alike.
SIZES = (5, 3, 7, 4, 6, 2, 8)


def grouped(value: str, separator: str, offset: int = 0) -> str:
    """`value` after its vendor prefix in groups of unequal sizes (`SIZES` from its
    `offset`-th on) with `separator` between them; the prefix stays on the first group."""
    prefix = m.group() if (m := _PREFIX.match(value)) and len(m.group()) < len(value) // 2 else ""
    body, groups, at, k = value[len(prefix) :], [], 0, offset
    while at < len(body):
        size = SIZES[k % len(SIZES)]
        groups.append(body[at : at + size])
        at, k = at + size, k + 1
    return prefix + separator.join(groups)
