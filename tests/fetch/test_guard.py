"""The SSRF guard: the address table (spec 12 item 22), URL parsing and strict mode."""

import socket

import pytest

from ctxmode import settings
from ctxmode.fetch import guard
from ctxmode.fetch.errors import (
    BadUrlError,
    BlockedAddressError,
    DnsError,
    SchemeNotAllowedError,
)
from ctxmode.fetch.guard import Verdict, classify_ip, parse_url

PUBLIC, PRIVATE, BLOCKED = Verdict.PUBLIC, Verdict.PRIVATE, Verdict.BLOCKED


@pytest.mark.parametrize(
    ("ip", "verdict"),
    [
        # spec 12 item 22, verbatim
        ("::ffff:127.0.0.1", PRIVATE),
        ("fe80::1%eth0", BLOCKED),
        ("::1%eth0", PRIVATE),
        ("1.2.3", BLOCKED),
        ("8.8.8.8", PUBLIC),
        ("169.254.169.254", BLOCKED),
        # IPv4
        ("169.254.1.1", BLOCKED),
        ("0.0.0.0", BLOCKED),
        ("0.1.2.3", BLOCKED),
        ("224.0.0.1", BLOCKED),
        ("239.255.255.250", BLOCKED),
        ("240.0.0.1", BLOCKED),
        ("255.255.255.255", BLOCKED),
        ("100.100.100.200", BLOCKED),
        ("192.0.2.10", BLOCKED),
        ("127.0.0.1", PRIVATE),
        ("127.8.9.10", PRIVATE),
        ("10.1.2.3", PRIVATE),
        ("172.16.0.1", PRIVATE),
        ("172.31.255.255", PRIVATE),
        ("192.168.1.1", PRIVATE),
        ("100.64.0.1", PRIVATE),
        ("198.18.0.5", PRIVATE),
        ("172.32.0.1", PUBLIC),
        ("1.1.1.1", PUBLIC),
        # IPv6
        ("::", BLOCKED),
        ("::1", PRIVATE),
        ("[::1]", PRIVATE),
        ("fe80::1", BLOCKED),
        ("fe80::1%25eth0", BLOCKED),
        ("febf::1", BLOCKED),
        ("ff02::1", BLOCKED),
        ("fc00::1", PRIVATE),
        ("fd12:3456::1", PRIVATE),
        ("fd00:ec2::254", BLOCKED),
        ("2001:4860:4860::8888", PUBLIC),
        ("2001:db8::1", BLOCKED),
        ("4000::1", BLOCKED),
        # IPv6 forms carrying an IPv4 address
        ("::ffff:169.254.169.254", BLOCKED),
        ("::ffff:8.8.8.8", PUBLIC),
        ("::ffff:10.0.0.1", PRIVATE),
        ("64:ff9b::a9fe:a9fe", BLOCKED),
        ("2002:a9fe:a9fe::1", BLOCKED),
        ("::127.0.0.1", PRIVATE),
        # malformed
        ("256.1.1.1", BLOCKED),
        ("1.2.3.4.5", BLOCKED),
        ("", BLOCKED),
        ("example.com", BLOCKED),
        ("::g", BLOCKED),
    ],
)
def test_ip_classification_table(ip, verdict):
    assert classify_ip(ip).verdict is verdict


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "ftp://example.com/x",
        "data:text/plain,hello",
        "javascript:alert(1)",
        "gopher://example.com/",
        "ws://example.com/",
        "mailto:a@example.com",
    ],
)
def test_non_http_schemes_are_refused(url):
    with pytest.raises(SchemeNotAllowedError, match="only http: and https:") as info:
        parse_url(url)
    assert info.value.code == "bad_scheme"


@pytest.mark.parametrize(
    "url",
    [
        "",
        "example.com/page",
        "localhost:8080",
        "http:example.com",
        "http://",
        "http://host:99999/",
        "http://host:0/",
        "http://user:secret@example.com/",
        "http://[::1/",
    ],
)
def test_malformed_urls_and_credentials_are_refused(url):
    with pytest.raises(BadUrlError) as info:
        parse_url(url)
    assert info.value.code == "bad_url"


def test_parse_url_normalises_host_port_and_path():
    t = parse_url("  HTTPS://Example.COM/a b/ü?q=1 2#frag ")
    assert (t.scheme, t.host, t.port) == ("https", "example.com", 443)
    assert t.path == "/a%20b/%C3%BC?q=1%202"
    assert t.netloc == "example.com"
    assert parse_url("http://[::1]:8080").netloc == "[::1]:8080"
    assert parse_url("http://bücher.example/").host == "xn--bcher-kva.example"


@pytest.mark.parametrize(
    ("env", "strict"),
    [
        ({}, False),
        ({"CTXMODE_FETCH_STRICT": "1"}, True),
        ({"CTX_FETCH_STRICT": "1"}, True),
        ({"CTXMODE_FETCH_STRICT": "true"}, True),
        ({"CTXMODE_FETCH_STRICT": "0"}, False),
    ],
)
def test_strict_mode_reads_both_variable_names(env, strict):
    assert settings.fetch_strict(env) is strict


def _no_dns(*args, **kwargs):
    raise AssertionError("an IP literal must be judged without a lookup")


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0:8080/",
        "http://[::ffff:169.254.169.254]/",
        "http://[fe80::1%25eth0]/",
        "http://224.0.0.1/",
    ],
)
def test_blocked_literals_are_refused_before_any_lookup(url):
    with pytest.raises(BlockedAddressError, match="blocked") as info:
        guard.resolve(parse_url(url), strict=False, resolver=_no_dns)
    assert info.value.code == "blocked_address"


def _answers(*ips):
    def resolver(host, port, **kwargs):
        return [
            (
                socket.AF_INET6 if ":" in ip else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (ip, port),
            )
            for ip in ips
        ]

    return resolver


def test_every_resolved_address_must_pass():
    target = parse_url("http://mixed.test/")
    with pytest.raises(BlockedAddressError, match="169.254.169.254"):
        guard.resolve(target, strict=False, resolver=_answers("93.184.216.34", "169.254.169.254"))


def test_private_answers_pass_unless_strict():
    target = parse_url("http://intranet.test/")
    [address] = guard.resolve(target, strict=False, resolver=_answers("10.0.0.5"))
    assert (address.ip, address.judged.verdict) == ("10.0.0.5", PRIVATE)
    with pytest.raises(BlockedAddressError, match="CTXMODE_FETCH_STRICT"):
        guard.resolve(target, strict=True, resolver=_answers("10.0.0.5"))


def test_the_strict_refusal_names_the_variable_the_user_set(monkeypatch):
    monkeypatch.delenv("CTXMODE_FETCH_STRICT", raising=False)
    monkeypatch.setenv("CTX_FETCH_STRICT", "1")
    target = parse_url("http://intranet.test/")
    with pytest.raises(BlockedAddressError, match=r"blocked under CTX_FETCH_STRICT=1$"):
        guard.resolve(target, strict=True, resolver=_answers("10.0.0.5"))


def test_unresolvable_host_is_a_dns_error():
    def fail(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    with pytest.raises(DnsError, match='DNS lookup failed for "nowhere.test"') as info:
        guard.resolve(parse_url("http://nowhere.test/"), strict=False, resolver=fail)
    assert info.value.code == "dns_failed"
