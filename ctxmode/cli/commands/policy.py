"""`ctxmode policy check`: which permission rule decides a command or a path, and why."""

from typing import Annotated

import typer

from ctxmode import paths
from ctxmode.cli import output
from ctxmode.cli.options import BareHelpGroup, JsonOpt, ProjectOpt
from ctxmode.errors import ExitCode

policy_app = typer.Typer(
    name="policy",
    cls=BareHelpGroup,
    help="Inspect the permission rules ctxmode enforces (Claude-style settings files).",
    no_args_is_help=True,
)


@policy_app.command("check")
def check(
    subject: Annotated[str, typer.Argument(help="A shell command, code, or (with --path) a file.")],
    path: Annotated[
        bool, typer.Option("--path", help="Check SUBJECT as a file path against Read rules.")
    ] = False,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang", "-l", help="Check SUBJECT as code in this language (shell escapes)."
        ),
    ] = None,
    project: ProjectOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Show the decision for a command, code or path, the rule that made it, and its file.

    A command or code is decided as execute and the ctx_* tools decide it: Bash rules
    on its commands, Read rules on the files it names, and an ask for a command that
    cannot be read from the text (a name built at run time) while Bash deny or ask
    rules are in force.

    Exit status: 0 allowed or no rule applies, 5 denied, 6 when a rule says ask.

    Example: ctxmode policy check "git push --force"
    """
    from ctxmode.executor.runtimes import normalize_language
    from ctxmode.security import (
        Decision,
        check_run,
        explain_command,
        explain_path,
        load_policy,
    )

    output.use_json(["policy", "check"], json_)
    project_dir = paths.resolve_project(project)
    policy = load_policy(project_dir)
    if path:
        explanation = explain_path(policy, subject, project_dir)
        verdict = explanation.verdict
    elif lang is not None and normalize_language(lang) != "shell":
        explanation = None
        verdict = check_run(policy, normalize_language(lang), subject, project_dir)
    else:
        explanation = explain_command(policy, subject)
        verdict = check_run(policy, "shell", subject, project_dir)
    code = {Decision.DENY: int(ExitCode.DENIED), Decision.ASK: int(ExitCode.ASK)}.get(
        verdict.decision, 0
    )
    rule = verdict.rule
    data: dict[str, object] = {
        "decision": verdict.decision.value,
        "rule": rule.raw if rule else None,
        "origin": rule.origin if rule else None,
        "matched": verdict.segment,
        "matched_as": verdict.matched_as,
        "embedded": verdict.embedded,
        "message": verdict.message,
        "reason": verdict.reason,
        "parts": list(explanation.parts) if explanation else [],
        "considered": [
            {"rule": m.rule.raw, "origin": m.rule.origin, "matched": list(m.matched)}
            for m in (explanation.considered if explanation else ())
        ],
        "sources": [
            {
                "path": str(s.path),
                "scope": s.scope.value,
                "status": s.status.value,
                "rules": s.rule_count,
                "error": s.error,
            }
            for s in policy.sources
        ],
        "warnings": list(policy.warnings),
    }
    if json_:
        output.emit_json(data, exit_code=code)
    else:
        _render(data)
    if code:
        raise typer.Exit(code)


def _render(data: dict[str, object]) -> None:
    con = output.stdout
    decision = str(data["decision"]).upper()
    con.print(f"decision: {decision}")
    if data["rule"]:
        con.print(f"rule:     {data['rule']}  ({data['origin']})")
        con.print(f"matched:  {data['matched_as'] or data['matched']}")
    if data["message"]:
        con.print(f"message:  {data['message']}")
    if data["reason"]:
        con.print(f"reason:   {data['reason']}")
    parts = data["parts"]
    if isinstance(parts, list) and len(parts) > 1:
        con.print("parts:    " + " | ".join(str(p) for p in parts))
    considered = data["considered"]
    if isinstance(considered, list) and considered:
        con.print("rules considered:")
        for item in considered:
            mark = "match" if item["matched"] else "     "
            con.print(f"  {mark}  {item['rule']}  ({item['origin']})")
    sources = data["sources"]
    if isinstance(sources, list):
        con.print("settings files:")
        for src in sources:
            con.print(f"  {src['status']:<10} {src['scope']:<8} {src['path']}")
    for warning in data["warnings"] if isinstance(data["warnings"], list) else []:
        output.warn(str(warning))
