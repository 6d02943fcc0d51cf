"""Read(...) rules on file paths: globs, .., symlinks, case (paths)."""

import sys

import pytest

from ctxmode.security import check_path, path_deny_check

from .policies import ALLOW, ASK, DENY, NONE, command_policy, policy_for, project_settings

PATH_CASES = [
    # (rule, path, expected); paths are relative to the project unless absolute
    ("Read(.env)", ".env", DENY),
    ("Read(.env)", "./.env", DENY),
    ("Read(.env)", "src/.env", NONE),
    ("Read(.env)", ".env.example", NONE),
    ("Read(.env)", "sub/../.env", DENY),
    ("Read(./.env)", ".env", DENY),
    ("Read(*.env)", "prod.env", DENY),
    ("Read(*.env)", "config/prod.env", NONE),
    ("Read(**/.env)", ".env", DENY),
    ("Read(**/.env)", "deep/nested/.env", DENY),
    ("Read(**/.env)", "deep/nested/.envrc", NONE),
    ("Read(**/*credentials*)", "a/b/aws-credentials.json", DENY),
    ("Read(**/*credentials*)", "credentials", DENY),
    ("Read(secrets/**)", "secrets/key.pem", DENY),
    ("Read(secrets/**)", "secrets/deep/key.pem", DENY),
    ("Read(secrets/**)", "not-secrets/key.pem", NONE),
    ("Read(secrets/)", "secrets/key.pem", DENY),
    ("Read(secrets)", "secrets/key.pem", DENY),  # a directory covers its contents
    ("Read(src/*.key)", "src/a.key", DENY),
    ("Read(src/*.key)", "src/sub/a.key", NONE),
    ("Read(src/?.key)", "src/a.key", DENY),
    ("Read(src/?.key)", "src/ab.key", NONE),
    ("Read(/config/**)", "config/app.yml", DENY),  # settings-root relative (Claude Code)
    ("Read", "any/file.txt", DENY),
    # Windows-style paths and globs
    ("Read(**/.env)", "config\\.env", DENY),
    ("Read(**/.env)", "C:\\Users\\me\\proj\\.env", DENY),
    ("Read(config\\*.yml)", "config/app.yml", DENY),
    ("Read(C:\\secrets\\**)", "C:\\secrets\\key", DENY),
]


@pytest.mark.parametrize(("rule", "path", "expected"), PATH_CASES)
def test_path_decision_table(project, rule, path, expected):
    policy = command_policy(project, deny=[rule])
    verdict = check_path(policy, path)
    assert verdict.decision is expected, (rule, path, verdict)


def test_absolute_deny_glob_is_not_bypassed_by_dotdot(project, tmp_path):
    secret = tmp_path / "outside" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("key", encoding="utf-8")
    policy = command_policy(project, deny=[f"Read(/{secret.parent}/**)"])
    assert check_path(policy, secret).decision is DENY
    assert check_path(policy, "../outside/id_rsa").decision is DENY
    assert check_path(policy, "a/b/../../../outside/id_rsa").decision is DENY
    assert check_path(policy, f"{project}/../outside/id_rsa").decision is DENY


def test_upstream_single_slash_absolute_glob_still_matches(project, tmp_path):
    secret = tmp_path / "outside" / "id_rsa"
    policy = command_policy(project, deny=[f"Read({secret.parent}/**)"])
    assert check_path(policy, "../outside/id_rsa").decision is DENY


def test_symlink_to_a_denied_file_is_denied(project, tmp_path):
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("s", encoding="utf-8")
    (project / "innocent.txt").symlink_to(secret)
    policy = command_policy(project, deny=[f"Read(/{secret})"])
    verdict = check_path(policy, "innocent.txt")
    assert verdict.decision is DENY
    assert verdict.segment == str(secret)


def test_symlink_to_the_env_file_is_denied_by_a_relative_rule(project):
    (project / ".env").write_text("TOKEN=x", encoding="utf-8")
    (project / "notes.txt").symlink_to(project / ".env")
    policy = command_policy(project, deny=["Read(.env)"])
    assert check_path(policy, "notes.txt").decision is DENY


def test_symlinked_directory_into_a_denied_tree_is_denied(project, tmp_path):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "key").write_text("k", encoding="utf-8")
    (project / "data").symlink_to(vault, target_is_directory=True)
    policy = command_policy(project, deny=[f"Read(/{vault}/**)"])
    assert check_path(policy, "data/key").decision is DENY
    assert check_path(policy, "data/not-yet-created").decision is DENY


def test_symlink_then_dotdot_follows_the_real_path(project, tmp_path):
    real_parent = tmp_path / "real"
    (real_parent / "inner").mkdir(parents=True)
    (real_parent / "secret").write_text("s", encoding="utf-8")
    (project / "link").symlink_to(real_parent / "inner", target_is_directory=True)
    policy = command_policy(project, deny=[f"Read(/{real_parent}/secret)"])
    # The kernel resolves link/.. to real/, not to the project: so must we.
    assert check_path(policy, "link/../secret").decision is DENY


def test_deny_rule_on_a_symlinked_project_dir_matches_real_paths(project, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(project, target_is_directory=True)
    (project / ".env").write_text("x", encoding="utf-8")
    project_settings(project, deny=["Read(.env)"])
    policy = policy_for(alias)
    assert check_path(policy, project / ".env").decision is DENY
    assert check_path(policy, alias / ".env").decision is DENY


def test_home_anchored_rule(project, home):
    policy = command_policy(project, deny=["Read(~/.ssh/**)"])
    assert check_path(policy, home / ".ssh" / "id_ed25519").decision is DENY
    assert check_path(policy, "~/.ssh/id_ed25519").decision is DENY
    assert check_path(policy, home / "notes.txt").decision is NONE


def test_case_insensitive_paths_on_case_insensitive_file_systems(project):
    policy = command_policy(project, deny=["Read(Secret.txt)"])
    exact = policy._replace(case_insensitive_paths=False)
    folded = policy._replace(case_insensitive_paths=True)
    assert check_path(exact, "SECRET.TXT").decision is NONE
    assert check_path(folded, "SECRET.TXT").decision is DENY
    assert policy.case_insensitive_paths is (sys.platform in ("darwin", "win32"))


def test_read_ask_and_allow_rules(project):
    policy = command_policy(project, ask=["Read(logs/**)"], allow=["Read(docs/**)"])
    assert check_path(policy, "logs/app.log").decision is ASK
    assert check_path(policy, "docs/index.md").decision is ALLOW
    assert check_path(policy, "src/main.py").decision is NONE


def test_paths_resolve_against_an_explicit_project_dir(project, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    policy = command_policy(project, deny=["Read(.env)"])
    assert check_path(policy, ".env", other).decision is NONE
    assert check_path(policy, "../project/.env", other).decision is DENY


def test_path_deny_check_fits_the_store_hook(project):
    policy = command_policy(project, deny=["Read(**/.env)"])
    denied = path_deny_check(policy)
    assert denied(str(project / "a" / ".env")) is True
    assert denied(str(project / "a" / "readme.md")) is False
