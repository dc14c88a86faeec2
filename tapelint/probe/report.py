"""What a probe run returns: its status, the device, the steps it measured and the TL8xx findings as
Diagnostics, plus its text and JSON renderings. No TensorFlow here."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from tapelint.diagnostic import Confidence, Diagnostic, Severity
from tapelint.probe.evidence import Evidence, read_evidence
from tapelint.probe.findings import compute_findings, evidence_notes

# Statuses after which the probe saw what it came for.
OK_STATUSES = ("stopped", "ended")
STATUS_TEXT = {
    "stopped": "stopped by the probe after {steps}",
    "ended": "the script ended by itself after {steps}",
    "exited": "the script called sys.exit({exit_code}) after {steps}",
    "raised": "the script raised after {steps}",
    "timeout": "timed out after {steps}",
    "crashed": "the child process died after {steps}",
    "setup-error": "could not start",
    "running": "interrupted after {steps}",
}


def display_path(path: str | None) -> str:
    if not path:
        return "<unknown>"
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def to_diagnostics(findings: list[dict[str, Any]], fallback_path: str) -> list[Diagnostic]:
    from tapelint import registry

    out = []
    for finding in findings:
        rule = registry.rule_by_key(finding["code"])
        out.append(Diagnostic(
            path=display_path(finding.get("path")) if finding.get("path") else fallback_path,
            line=finding["line"], column=finding["column"], end_line=finding["end_line"],
            end_column=finding["end_column"], code=finding["code"],
            name=rule.name if rule is not None else finding["code"], message=finding["message"],
            # A finding may be milder than its rule (a zero gradient the probe can explain is info).
            severity=Severity(finding["severity"]) if finding.get("severity") else
            rule.severity if rule is not None else Severity.WARNING,
            confidence=rule.confidence if rule is not None else Confidence.HIGH,
            extra=tuple(sorted((finding.get("data") or {}).items())),
        ))
    out.sort(key=Diagnostic.sort_key)
    return out


@dataclass
class ProbeResult:
    """The outcome of one probe run. `findings` holds the runtime findings (TL8xx) as Diagnostics, so a
    test can `assert not result.findings`."""

    status: str
    script: str
    steps: int = 0
    device: str | None = None
    gpus: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    exit_code: int | None = None
    evidence: Evidence = field(default_factory=Evidence)
    findings: list[Diagnostic] = field(default_factory=list)
    elapsed: float = 0.0
    output_tail: list[str] = field(default_factory=list)
    requested_steps: int = 1
    # What the probe had to do to the run itself: processes it stopped, a stop the script ignored.
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_payload(cls, payload: dict[str, Any], *, display_script: str, settings: dict[str, Any] | None,
                     steps: int, elapsed: float = 0.0, output_tail: list[str] | None = None) -> "ProbeResult":
        from tapelint.probe_settings import probe_settings

        status = payload.get("status", "crashed")
        evidence = read_evidence(payload.get("evidence"), status)
        values = probe_settings(tuple((settings or {}).items()))
        findings = to_diagnostics(compute_findings(evidence, values), display_script)
        return cls(status=status, script=display_script, steps=evidence.steps_completed, device=evidence.device,
                   gpus=list(evidence.gpus), error=payload.get("error"),
                   exit_code=payload.get("exit_code"), evidence=evidence, findings=findings, elapsed=elapsed,
                   output_tail=list(output_tail or []), requested_steps=steps,
                   notes=list(payload.get("notes") or []) + evidence_notes(evidence, values))

    @property
    def gradient_calls(self) -> int:
        return len(self.evidence.steps)

    @property
    def ok(self) -> bool:
        """The probe ran at least one step and the script did not fail."""
        return self.status in OK_STATUSES and self.gradient_calls > 0

    @property
    def failure(self) -> str | None:
        """One line on why the probe could not finish its job, or None."""
        if self.status in OK_STATUSES and self.gradient_calls == 0:
            return (f"{self.script}: no training step: the script never called `tape.gradient` on trainable "
                    f"variables")
        if self.status in OK_STATUSES:
            return None
        message = (self.error or {}).get("message") or self.status
        frame = (self.error or {}).get("frame")
        if self.status == "exited":
            detail = (self.error or {}).get("message")
            message = f"the script called sys.exit({self.exit_code})" + (f": {detail}" if detail else "")
        if frame and self.status == "exited":
            return f"{display_path(frame['path'])}:{frame['line']}: {message}"
        if frame:
            return (f"{display_path(frame['path'])}:{frame['line']}: {message} (in `{frame['function']}`, "
                    f"the script's own error)")
        return f"{self.script}: {message}"

    @property
    def device_text(self) -> str:
        if not self.device:
            return "no device (no step ran)"
        if self.device.startswith("GPU") and self.gpus:
            match = next((g for g in self.gpus if g.startswith(self.device)), None)
            return match or self.device
        return self.device

    def summary_line(self) -> str:
        steps = f"{self.steps} step{'s' if self.steps != 1 else ''}"
        status = STATUS_TEXT.get(self.status, self.status).format(steps=steps, exit_code=self.exit_code)
        return f"Probe of {self.script}: {status}, on {self.device_text}, in {self.elapsed:.1f} s."

    def step_lines(self) -> list[str]:
        lines = []
        for step in self.evidence.steps:
            variables = step.variables
            norms = [v.norm for v in variables if isinstance(v.norm, (int, float))]
            total_norm = sum(n * n for n in norms) ** 0.5 if norms else None
            label = f"step {step.index} (gradient only)" if step.observation else f"step {step.index}"
            parts = [f"  {label}:"]
            loss = step.loss
            parts.append(f"loss {_short(loss)}" if loss is not None else "loss ?")
            parts.append(f"|g| {_short(total_norm)}" if total_norm is not None else "|g| ?")
            none = sum(1 for v in variables if v.none)
            zero = sum(1 for v in variables if v.zero)
            parts.append(f"{len(variables)} variables ({none} None, {zero} zero)")
            updates = step.updates
            if updates is not None:
                changed = sum(1 for u in updates.values() if u.changed)
                ratios = [u.ratio for u in updates.values() if u.kernel and u.ratio is not None]
                upd = f"{changed} changed"
                if ratios:
                    upd += f", max |dw|/|w| {_short(max(ratios))}"
                parts.append(upd)
            lines.append(" ".join(parts[:1]) + " " + ", ".join(parts[1:]))
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status, "ok": self.ok, "script": self.script, "steps": self.steps,
            "device": self.device, "gpus": self.gpus, "error": self.error, "exit_code": self.exit_code,
            "failure": self.failure, "elapsed_s": round(self.elapsed, 3), "notes": self.notes,
            "measurements": [s.to_dict() for s in self.evidence.steps],
            "optimizers": [o.to_dict() for o in self.evidence.optimizers],
        }

    def render(self, output_format: str = "text") -> str:
        if output_format == "json":
            from tapelint import __version__

            return json.dumps({"version": __version__, "schema": 1, "probe": self.to_dict(),
                               "diagnostics": [d.to_dict() for d in self.findings]}, indent=2, default=str) + "\n"
        from tapelint.reporters.text import location

        lines = [self.summary_line(), *self.step_lines(), *(f"  note: {note}" for note in self.notes)]
        failure = self.failure
        if failure:
            lines.append(f"tapelint: probe: {failure}")
            if self.status not in OK_STATUSES and self.output_tail:
                lines.append("  last lines of the script's output:")
                lines += [f"    {line}" for line in self.output_tail[-8:]]
        lines.append("")
        for d in self.findings:
            lines.append(f"{location(d)}: {d.code} {d.message} [{d.name}]")
        count = len(self.findings)
        if count:
            lines.append("")
            lines.append(f"Found {count} runtime finding{'s' if count != 1 else ''}.")
        else:
            lines.append("No runtime findings." if self.ok else "No runtime findings (the probe did not finish).")
        return "\n".join(lines) + "\n"

    def exit_code_for(self, exit_zero: bool = False) -> int:
        """0: at least one step ran, no findings. 1: findings, or the script failed, timed out or ran no step."""
        if exit_zero:
            return 0
        return 1 if self.findings or not self.ok else 0


def _short(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "?"
    if value == 0:
        return "0"
    if abs(value) >= 1e4 or abs(value) < 1e-3:
        return f"{value:.2e}"
    return f"{value:.3g}"
