"""The text checks against a corpus of bypass attempts and of ordinary work (`corpus`).

Every bypass gets the decision the corpus records for it, known misses included (a miss
that starts being caught is good news: move it to its new decision); no ordinary command
or script is denied, and only the few listed ordinary forms are asked about.
"""

import pytest

from ctxmode.security import Decision, Subject, check_run, check_unchecked

from .corpus import BYPASSES, ORDINARY, ORDINARY_ASKED, PROJECT_FILES, RULES
from .policies import command_policy, policy_for, project_settings


@pytest.fixture
def policy(project):
    for name, text in PROJECT_FILES.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return command_policy(project, deny=RULES)


def _label(case) -> str:
    language, code = case
    return f"{language}:{code[:50]}"


@pytest.mark.parametrize(
    ("case", "expected"),
    [pytest.param(case, expected, id=_label(case)) for case, expected in BYPASSES.items()],
)
def test_each_bypass_gets_its_recorded_decision(policy, project, case, expected):
    language, code = case
    assert check_run(policy, language, code, project).decision.value == expected


@pytest.mark.parametrize("case", ORDINARY, ids=_label)
def test_ordinary_work_is_left_alone(policy, project, case):
    language, code = case
    assert check_run(policy, language, code, project).decision is Decision.NONE


@pytest.mark.parametrize("case", ORDINARY_ASKED, ids=_label)
def test_ordinary_forms_named_at_run_time_are_asked_about_not_denied(policy, project, case):
    language, code = case
    assert check_run(policy, language, code, project).decision is Decision.ASK


def test_the_corpus_is_mostly_caught():
    caught = [d for d in BYPASSES.values() if d != "none"]
    assert len(caught) >= 0.85 * len(BYPASSES)


def test_a_command_named_at_run_time_is_asked_about_with_the_rule_it_could_evade(project):
    policy = command_policy(project, deny=["Bash(rm:*)"])
    verdict = check_run(policy, "shell", "$TOOL -rf build", project)
    assert verdict.decision is Decision.ASK
    assert verdict.subject is Subject.UNCHECKED
    assert verdict.rule is not None and verdict.rule.raw == "Bash(rm:*)"
    assert verdict.segment == "$TOOL -rf build"
    assert "named at run time ($TOOL)" in (verdict.reason or "")


def test_without_bash_deny_or_ask_rules_nothing_is_asked(project):
    policy = command_policy(project, allow=["Bash(ls:*)"], deny=["Read(.env)"])
    assert check_unchecked(policy, "shell", "$TOOL -rf build").decision is Decision.NONE
    assert check_run(policy, "shell", "echo x | sh", project).decision is Decision.NONE


def test_fail_closed_denies_what_cannot_be_checked(project):
    project_settings(project, deny=["Bash(rm:*)"])
    policy = policy_for(project, fail_closed=True)
    verdict = check_run(policy, "shell", "$TOOL -rf build", project)
    assert verdict.decision is Decision.DENY
    assert verdict.message == (
        'Blocked by security policy: "$TOOL -rf build" runs a command named at run time '
        "($TOOL), which no rule can check (deny rule Bash(rm:*) is in force) "
        "(CTXMODE_REQUIRE_SECURITY=1)"
    )


def test_an_ask_rule_is_what_an_unchecked_command_could_evade_too(project):
    policy = command_policy(project, ask=["Bash(git push:*)"])
    verdict = check_run(policy, "shell", "$GIT push --force", project)
    assert verdict.decision is Decision.ASK
    assert verdict.rule is not None and verdict.rule.raw == "Bash(git push:*)"


def test_a_deny_rule_still_beats_an_unchecked_ask(project):
    policy = command_policy(project, deny=["Bash(rm:*)"])
    verdict = check_run(policy, "shell", "$TOOL x; rm -rf build", project)
    assert verdict.decision is Decision.DENY
    assert verdict.rule is not None and verdict.rule.raw == "Bash(rm:*)"
