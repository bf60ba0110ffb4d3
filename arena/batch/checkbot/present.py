"""Presenting a check-bot run: the readable report and JUnit XML for CI systems."""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

from arena.batch.checkbot.results import CheckReport, ScenarioResult, latency_summary, plural
from arena.batch.checkbot.scenarios import Scenario


def _ms(summary: Mapping[str, float | int]) -> str:
    return f"p50 {summary['p50']:.1f} ms, p99 {summary['p99']:.1f} ms, max {summary['max']:.1f} ms"


def render(report: CheckReport) -> str:
    """The readable report: one line per scenario, then every fault in detail."""
    o = report.options
    lines = [
        f"arena check-bot: {report.command}",
        f"time limit {o.time_limit_ms} ms per decision, bank {o.time_bank_ms} ms, "
        f"reconnect grace {o.grace_ms} ms; a scenario stops at the bot's "
        f"{o.max_faults}th fault",
        *([f"sandbox: {o.sandbox.describe()}"] if o.sandbox else []),
        "",
    ]
    width = max([len(r.scenario.name) for r in report.results] + [8])
    for r in report.results:
        s = r.scenario
        lat = latency_summary(r.latencies)
        note = f"{len(r.faults)} fault{plural(len(r.faults))}" if r.faults else ""
        if r.status in ("error", "skipped"):
            note = r.error or f"match {r.state}"
        elif r.other_faults:
            note = (note + "; " if note else "") + "warning: a built-in opponent faulted"
        lines.append(
            f"{r.status.upper():<5} {s.name:<{width}}  seat {s.seat}  {r.decisions:>3} answers  "
            f"p50 {lat['p50']:6.1f} ms  p99 {lat['p99']:6.1f} ms  {note}".rstrip()
        )
        if r.missed and r.status in ("pass", "fail"):
            lines.append(f"{'':<6}{'':<{width}}  not reached: {'; '.join(r.missed)}")
    seen: dict[tuple[str, ...], str] = {}  # an error told once (a bot that cannot start)
    for r in report.results:
        if r.status in ("pass", "skipped") and not r.other_faults:
            continue
        key = (r.error, *r.log_tail)
        if r.status == "error" and key in seen:
            lines.append(f"ERROR {r.scenario.name}: as {seen[key]} ({r.error})")
            continue
        if r.status == "error":
            seen[key] = r.scenario.name
        lines += ["", f"{r.status.upper()} {r.scenario.name}: {r.scenario.description}"]
        lines += _failure_lines(r, "  ")
    total = latency_summary(report.latencies())
    lines += ["", f"latency of the bot ({total['n']} answers): {_ms(total)}"]
    n = len(report.results)
    if report.passed:
        lines.append(f"result: PASS — {n} scenario{plural(n)}, no faults")
    else:
        failed = sum(1 for r in report.results if r.status == "fail")
        errors = sum(1 for r in report.results if r.status == "error")
        kinds = ", ".join(f"{k} {c}" for k, c in sorted(report.fault_counts().items()))
        parts = []
        if failed:
            parts.append(f"{failed} of {n} scenario{plural(n)} with faults ({kinds})")
        if errors:
            parts.append(f"{errors} of {n} did not complete")
        if len(parts) < 1:
            parts.append("see above")
        lines.append("result: FAIL — " + "; ".join(parts))
    lines.append(f"records and bot logs: {o.out}/")
    return "\n".join(lines)


def _failure_lines(r: ScenarioResult, indent: str) -> list[str]:
    seat = r.scenario.seat
    lines: list[str] = []
    if not r.connected:
        lines.append(f"{indent}the bot never took its seat (it did not start, crashed at once, "
                     "or was refused)")  # fmt: skip
    for i, fault in enumerate(r.faults, 1):
        lines.append(f"{indent}#{i}")
        lines += [f"{indent}  {line}" for line in fault.details(seat)]
    if r.uncharged:
        lines.append(
            f"{indent}and {r.uncharged} later decision{plural(r.uncharged)} played by fallback "
            "while the bot was away (not charged again)"
        )
    for other in r.other_faults:
        lines.append(f"{indent}warning: {other} (the machine may be too busy for this time limit)")
    if r.state not in ("finished", "skipped") or (r.error and r.state != "skipped"):
        lines.append(f"{indent}match {r.state}{': ' + r.error if r.error else ''}")
    if r.result.startswith("forfeit"):
        lines.append(f"{indent}the scenario was stopped: {r.result}")
    if r.log_tail and r.status != "pass":
        lines.append(f"{indent}bot log ({r.log}), last lines:")
        lines += [f"{indent}  | {line}" for line in r.log_tail]
    if r.record:
        lines.append(f"{indent}record: {r.record}")
    return lines


def junit_xml(report: CheckReport) -> str:
    """JUnit XML: one test suite, one test case per scenario."""
    results = report.results
    attrs = {
        "name": "arena check-bot",
        "tests": str(len(results)),
        "failures": str(sum(1 for r in results if r.status == "fail")),
        "errors": str(sum(1 for r in results if r.status == "error")),
        "skipped": str(sum(1 for r in results if r.status == "skipped")),
        "time": f"{report.seconds:.3f}",
    }
    root = ET.Element("testsuites", attrs)
    suite = ET.SubElement(root, "testsuite", {**attrs, "timestamp": _now()})
    props = ET.SubElement(suite, "properties")
    o = report.options
    for name, value in (
        ("bot", report.command),
        ("time_limit_ms", str(o.time_limit_ms)),
        ("time_bank_ms", str(o.time_bank_ms)),
        ("latency_ms", _ms(latency_summary(report.latencies()))),
        ("sandbox", o.sandbox.describe() if o.sandbox else "none"),
    ):
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    for r in results:
        s = r.scenario
        case = ET.SubElement(
            suite,
            "testcase",
            {"classname": f"check-bot.{s.kind}", "name": s.name, "time": f"{r.seconds:.3f}"},
        )
        details = _clean("\n".join(_failure_lines(r, "")))
        if r.status == "fail":
            more = f" (+{len(r.faults) - 1} more)" if len(r.faults) > 1 else ""
            message = _clean(r.cause.headline + more)
            ET.SubElement(
                case, "failure", {"message": message, "type": r.cause.kind}
            ).text = details
        elif r.status == "error":
            message = _clean(r.error or f"match {r.state}")
            ET.SubElement(case, "error", {"message": message, "type": r.state}).text = details
        elif r.status == "skipped":
            ET.SubElement(case, "skipped", {"message": _clean(r.error)})
        lat = latency_summary(r.latencies)
        out = [
            s.description,
            f"seat {s.seat}; {r.decisions} answers; latency {_ms(lat)}",
            f"reached: {'; '.join(r.reached) or 'nothing'}",
        ]
        if r.missed:
            out.append(f"not reached: {'; '.join(r.missed)}")
        out += [f"warning: {w}" for w in r.other_faults]
        if r.record:
            out.append(f"record: {r.record}")
        ET.SubElement(case, "system-out").text = _clean("\n".join(out))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _clean(text: str) -> str:
    """Drop the characters XML 1.0 cannot hold (a bot's log may contain anything)."""
    return "".join(
        c for c in text if c in "\t\n\r" or 0x20 <= ord(c) <= 0xD7FF or 0xE000 <= ord(c) <= 0xFFFD
        or 0x10000 <= ord(c) <= 0x10FFFF
    )  # fmt: skip


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())


def scenario_table(scenarios: Sequence[Scenario]) -> str:
    width = max([len(s.name) for s in scenarios] + [8])
    return "\n".join(f"{s.name:<{width}}  seat {s.seat}  {s.description}" for s in scenarios)


__all__ = ["junit_xml", "render", "scenario_table"]
