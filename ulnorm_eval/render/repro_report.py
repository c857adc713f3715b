"""How `ulnorm-eval repro` shows a :class:`~ulnorm_eval.analysis.repro.Reproduction`: its two tables in
every format (render.frames), the gate's verdict on stderr and its Markdown summary (--summary-md), as
eval's gate shows its own (docs/comparing.md, "Reproductions")."""
from __future__ import annotations

from .frames import render
from .gate_md import gate_head
from .files import Output, View
from .values import markdown_text, num_text

__all__ = ["repro_outputs", "repro_verdict", "repro_markdown"]


_WHAT = {"rmse": "RMSE of {measure}", "ktu": "KTU"}
_BOUND = {"rmse": "<=", "ktu": ">="}


def _check_text(check: dict, name=str) -> str:
    what = _WHAT[check["check"]].format(measure=name(check["measure"]))
    return (f"{what}, {check['pair']} pair: {check['value']:.4f} (gate {_BOUND[check['check']]} "
            f"{check['threshold']:g}): {'FAILED' if check['failed'] else 'passed'}")


def _head(checks: list) -> str:
    return gate_head(sum(bool(check["failed"]) for check in checks), len(checks))


def repro_verdict(rep):
    """The gate's verdict, ``(stderr lines, failed)``, or None without a gate (--max-rmse, --min-ktu)."""
    if not rep.checks:
        return None
    return [_head(rep.checks)] + ["  " + _check_text(check) for check in rep.checks], rep.failed


def _number(value) -> str:
    return str(value) if isinstance(value, int) else num_text(value, 4)


def repro_markdown(rep) -> str:
    """The gate as Markdown (for $GITHUB_STEP_SUMMARY): verdict heading, its checks, then both tables."""
    lines = [f"### Reproduction: {_head(rep.checks) if rep.checks else 'no gate'}", ""]
    lines += [f"- {_check_text(check, markdown_text)}" for check in rep.checks] + ([""] if rep.checks else [])
    for table in rep.tables.values():
        lines += ["| " + " | ".join(table.columns) + " |", "|:-|" + "-:|" * (len(table.columns) - 1)]
        lines += ["| " + " | ".join(markdown_text(str(cell)) if isinstance(cell, str) else _number(cell)
                                    for cell in row) + " |" for row in table.rows()]
        lines.append("")
    return "\n".join(lines)


def repro_outputs(rep, view: View) -> list:
    """render.files.Output items: the tables in ``view.fmt`` (stdout or -o), the Markdown to --summary-md."""
    return [Output(view.output, render(rep.tables, view.fmt, view.precision, rep.meta)),
            Output(view.summary_md, repro_markdown(rep), append=True) if view.summary_md else None]
