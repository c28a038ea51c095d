"""Checker ``judges``: two models read the evidence; success only when both agree.

Used where a task has no audit-event criteria (the ``actiontrail`` checker decides
those). Each judge reads the goal, the doc's steps, the actions taken and how they
went, the findings, the final page and — where the console has an audit log — the
events recorded in the execution window; never the agent's thoughts nor its own
claim of success. Two yes → reached, two no → not reached, anything else
(disagreement, a judge that cannot answer) → undecided, so the verdict is
INCONCLUSIVE rather than a guess.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from pydantic import ConfigDict
from pydantic import Field as Option

from docverify.check.checker import Checker, Evidence
from docverify.cost import Usage
from docverify.engines import (
    EndpointOptions,
    Engine,
    EngineName,
    get_engine,
    parse_json_object,
    prompt_environment,
)
from docverify.errors import DocverifyError, Undecided
from docverify.execute.compact import compact_snapshot
from docverify.report.trajectory import CheckResult
from docverify.scrub import scrub
from docverify.task import Task
from docverify_models.agent import PROMPTS

log = logging.getLogger(__name__)

def verdict_schema(max_text: int = 400) -> dict[str, Any]:
    """A judge's answer; ``max_text`` bounds the reasons (short for grammar engines)."""
    return {
        "type": "object",
        "description": "Whether the procedure reached its goal, and the evidence that decided it.",
        "properties": {
            "success": {"type": "boolean"},
            "reasons": {"type": "string", "maxLength": max_text},
        },
        "required": ["success", "reasons"],
        "additionalProperties": False,
    }


class JudgeOptions(EndpointOptions):
    """One judge's model: an OpenAI-protocol endpoint, or llama.cpp in process."""

    model_config = ConfigDict(extra="forbid")

    engine: EngineName = Option("openai", description="the model engine, by name: openai (any endpoint), llamacpp, "
                                                      "or a plugin's")
    model_path: str | None = Option(None, description="llamacpp: a GGUF file (default: the shipped small model)")


class JudgesChecker(Checker):
    """Two LLM judges over the evidence; both must agree (for tasks without audit-event criteria)."""

    name = "judges"

    class Options(Checker.Options):
        first: JudgeOptions = Option(default_factory=JudgeOptions, description="the first judge")
        second: JudgeOptions = Option(default_factory=JudgeOptions, description="the second judge")
        max_invalid: int = Option(2, ge=0, le=10, description="retries of an answer that is not the verdict JSON")
        max_answer_tokens: int = Option(300, ge=32, description="longest answer")
        observation_tokens: int = Option(2500, ge=200, description="final-page budget in the prompt")
        audit_events: bool = Option(True, description="show the audit log's events of the window, when there is one")
        prompts_dir: str | None = Option(None, description="folder with judge_system.j2/judge_user.j2 overrides")

    def __init__(self, options: "JudgesChecker.Options | None" = None) -> None:
        super().__init__(options)
        self.backends: list[Engine] | None = None
        self.prompts = prompt_environment(self.options.prompts_dir, PROMPTS)

    def applies(self, task: Task) -> bool:
        return not task.criteria

    def prepare(self) -> None:
        if self.backends is None:
            self.backends = [self.backend(self.options.first), self.backend(self.options.second)]
            for backend in self.backends:
                self.meter.require_price(backend.model, local=backend.local)

    def close(self) -> None:
        for backend in self.backends or ():
            backend.close()
        self.backends = None

    @staticmethod
    def backend(judge: JudgeOptions) -> Engine:
        return get_engine(judge.engine).from_options(judge)

    async def check(self, evidence: Evidence) -> CheckResult:
        self.prepare()
        assert self.backends is not None
        events = await self.audit_events(evidence) if self.options.audit_events else None
        messages = self.messages(evidence, events)
        usage = Usage()
        answers = await asyncio.gather(*(self.ask(backend, messages, usage) for backend in self.backends))
        votes = [vote for vote, _ in answers]
        said = "; ".join(f"judge {i + 1} ({b.model}): {'yes' if v else 'no' if v is False else 'no answer'} — {r}"
                         for i, (b, (v, r)) in enumerate(zip(self.backends, answers)))
        record = [{"judge": i + 1, "model": b.model, "success": v, "reasons": r}
                  for i, (b, (v, r)) in enumerate(zip(self.backends, answers))]
        if votes[0] is not None and votes[0] == votes[1]:
            reason = ("both judges: goal reached" if votes[0] else "both judges: goal not reached") + f" ({said})"
            return CheckResult(self.name, votes[0], reason, record, usage)
        return CheckResult(self.name, None, f"judges disagree: {said}", record, usage)

    async def ask(self, backend: Engine, messages: list[dict[str, Any]], usage: Usage) -> tuple[bool | None, str]:
        """One judge's vote and reasons; (None, why) when it gives no usable verdict."""
        problem = ""
        for _ in range(self.options.max_invalid + 1):
            tokens_in = backend.count_tokens(messages)
            try:
                with self.meter.spending(backend.model, tokens_in, self.options.max_answer_tokens,
                                         local=backend.local) as bill:
                    completion = await backend.complete(messages, verdict_schema(backend.max_text),
                                                        name="judge_verdict", max_tokens=self.options.max_answer_tokens,
                                                        temperature=0.0)
                    bill(usage, completion.tokens_in, completion.tokens_out)
            except (Undecided, DocverifyError) as error:
                return None, str(error)
            try:
                data = parse_json_object(completion.text)
                if not isinstance(data.get("success"), bool):
                    raise ValueError("'success' must be true or false")
                return data["success"], scrub(str(data.get("reasons") or "")).strip()[:400]
            except ValueError as error:
                usage.invalid_outputs += 1
                problem = str(error)
                messages = [*messages, {"role": "assistant", "content": completion.text[:2000]},
                            {"role": "user", "content": f"That answer cannot be used ({problem}). Answer with one "
                                                        'JSON object: {"success": true|false, "reasons": "..."}'}]
        return None, f"no usable verdict ({problem})"

    def messages(self, evidence: Evidence, events: list[str] | None) -> list[dict[str, Any]]:
        task = evidence.task
        actions = []
        for turn in evidence.turns:
            if turn.action.get("kind") in ("done", "flag_step"):
                continue  # the agent's claims are not evidence
            status = "ok" if turn.ok else f"failed: {turn.error}"
            actions.append(f"- [step {turn.step or '?'}] {turn.description} -> {status}")
        final = evidence.final
        user = self.prompts.get_template("judge_user.j2").render(
            goal=task.goal, path=task.procedure.path,
            steps=[{"number": s.number, "text": task.resolve(s.text)} for s in task.procedure.all_steps()],
            actions=actions, findings=[f.message for f in evidence.findings], events=events,
            url=final.url if final else "", title=final.title if final else "",
            snapshot=compact_snapshot(final.snapshot, self.options.observation_tokens, task.goal) if final else "(no page)")
        system = self.prompts.get_template("judge_system.j2").render()
        return [{"role": "system", "content": scrub(system)}, {"role": "user", "content": scrub(user)}]

    async def audit_events(self, evidence: Evidence) -> list[str] | None:
        """The account's audit events in the window, one line each, from the audit log a configured
        checker reads (:attr:`Evidence.audit`: the ``actiontrail`` checker's); None without one."""
        if evidence.audit is None:
            return None
        try:
            found = await evidence.audit.events(evidence.started - 1, evidence.finished + 1)
        except Exception as error:  # the judges still judge from the page
            log.info("audit events unavailable for judging: %s", error)
            return None
        lines = []
        for event in found[:40]:
            name = event.get("eventName") or event.get("EventName")
            service = event.get("serviceName") or event.get("ServiceName") or ""
            error = event.get("errorCode") or event.get("ErrorCode")
            resources = event.get("resourceName") or event.get("ResourceName") or ""
            lines.append(f"{service}:{name} {resources}".strip() + (f" (error {error})" if error else ""))
        return lines
