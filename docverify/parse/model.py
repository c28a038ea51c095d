"""Plain data produced by the parser: documents, procedures, steps, actions.

Every line number is 1-based and refers to the source file as read from disk
(front matter included), so reports can point at the doc's own lines.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum
from typing import Any


def _plain_dict(items: list[tuple[str, Any]]) -> dict[str, Any]:
    """``asdict`` factory giving JSON/YAML-ready values (enums as their value)."""
    return {key: value.value if isinstance(value, Enum) else value for key, value in items}


class Intent(StrEnum):
    """What a step (or one action within it) asks the reader to do."""

    OPEN_CONSOLE = "open_console"  #: "Log on to the ECS console"
    OPEN_URL = "open_url"  #: "Open https://..."
    SELECT_REGION = "select_region"  #: "In the top navigation bar, select a region"
    CLICK = "click"  #: "Click **Create Bucket**"
    OPEN_RESOURCE = "open_resource"  #: "Click the name of the bucket", "单击目标实例ID": an existing one's page
    NAVIGATE = "navigate"  #: a menu path, "choose **Network & Security** > **Security Groups**"
    FILL = "fill"  #: "enter docs_db in the **Database Name** field"
    SELECT = "select"  #: "select **Standard** from **Storage Class**"
    TOGGLE = "toggle"  #: "turn on **Versioning**", "select the **Enable** check box"
    CONFIRM = "confirm"  #: "In the message that appears, click **OK**"
    CONFIGURE = "configure"  #: "Configure the parameters described in the following table"
    VERIFY = "verify"  #: "Check that the bucket appears in the list"
    FREE_TEXT = "free_text"  #: anything else: not actionable literally


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass
class Diagnostic:
    """A problem found in the input, always with file and line."""

    path: str
    line: int
    severity: Severity
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.severity}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self, dict_factory=_plain_dict)


@dataclass
class Field:
    """A field/value pair: a row of a parameter table or an inline value.

    ``value`` is the concrete value the doc gives, if any ("Select **Standard**" ->
    "Standard"); ``description`` is the rest of the row's text.
    """

    name: str
    line: int
    value: str | None = None
    description: str = ""
    required: bool | None = None
    group: str | None = None  #: the group-header row above it, if the table has groups
    options: list[str] = field(default_factory=list)  #: bold choices listed in the cell
    example: bool = False  #: ``value`` is the doc's example ("for example `web-01`"), not an order
    described: bool = False  #: ``name`` is the doc's words for the field ("an image name"), not its label


@dataclass
class Note:
    """A note/warning/tip attached to a step or procedure."""

    kind: str  #: note, warning, important, tip, caution, danger
    text: str
    line: int


@dataclass
class Action:
    """One thing a step asks for, in order; a step may hold several.

    ``target`` is the UI label acted upon (button, field, option, menu item); for
    NAVIGATE, ``path`` is the menu path; for FILL/SELECT, ``value`` is what to
    enter or choose; for OPEN_CONSOLE, ``target`` is the console name and ``url``
    its link if given. ``resource`` names the existing resource a row's control
    belongs to ("find the **instance** and click **Start**"); for OPEN_RESOURCE,
    ``value`` says which of its links ("name" or "id").
    """

    intent: Intent
    line: int
    target: str | None = None
    path: list[str] = field(default_factory=list)
    value: str | None = None
    url: str | None = None
    resource: str | None = None  #: the existing resource it acts on ("instance" in "find the instance and click ...")
    example: bool = False  #: ``value`` is the doc's example ("for example `web-01`"), not an order
    context: str | None = None  #: the part of the page it is in: "Lifecycle" in "In the **Lifecycle** section, click ..."
    #: ``target`` is the doc's words for a control, not its label ("Specify the principal.",
    #: "Enter an image name"): a control the page names otherwise is no renamed label
    described: bool = False


@dataclass
class Alternative:
    """One of several ways to do a step ("Method 1", "use one of the following")."""

    title: str
    line: int
    steps: list["Step"] = field(default_factory=list)


@dataclass
class Step:
    """One item of a procedure's ordered list."""

    number: str  #: "3", or "3.2" for a sub-step
    line: int
    end_line: int
    text: str  #: the step's own text (first paragraph), Markdown markers removed
    intent: Intent  #: the intent of the first action, or FREE_TEXT
    actions: list[Action] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  #: every UI label named, in order
    menu_paths: list[list[str]] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    substeps: list["Step"] = field(default_factory=list)
    alternatives: list[Alternative] = field(default_factory=list)
    optional: bool = False  #: "(Optional) ..."
    #: "If this is the first time you ..., click **Create**": taken when the page offers it
    conditional: bool = False


@dataclass
class Annotation:
    """The ``docverify:`` keys from an HTML comment or front matter."""

    line: int
    id: str | None = None
    product: str | None = None
    region: str | None = None
    requires: list[dict[str, Any]] = field(default_factory=list)  #: Resource META
    expect: list[dict[str, Any]] = field(default_factory=list)  #: audit events
    skip: bool | str = False  #: True, or the reason to skip
    extra: dict[str, Any] = field(default_factory=dict)  #: keys for plugins (x-...)


@dataclass
class Procedure:
    """An ordered list of steps with a goal: the unit docverify executes."""

    id: str  #: stable: "<path-stem>#<heading-slug>" or the annotation's id
    title: str
    path: str  #: as given, relative when the user gave a relative path
    line: int
    end_line: int
    steps: list[Step] = field(default_factory=list)
    product: str | None = None
    region: str | None = None
    headings: list[str] = field(default_factory=list)  #: enclosing headings, outermost first
    prerequisites: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    placeholders: list[str] = field(default_factory=list)
    annotation: Annotation | None = None
    language: str = "en"  #: "en" or "zh" (detected)
    cloud: str | None = None  #: whose console the doc is for: "alibaba", "aws", "azure", "gcp"; None: not said
    #: the id of the part of the doc this one goes on from ("Step 2: ..." after "Step 1: ..."):
    #: ``check`` runs that one first (``spec/sequence.py``)
    continues: str | None = None
    #: set by ``check``: the ids of the parts whose steps (numbered ``p1.…``) run first
    lead_in: list[str] = field(default_factory=list)

    def all_steps(self) -> list[Step]:
        """Steps in document order, sub-steps and alternatives' steps included."""
        out: list[Step] = []

        def walk(steps: list[Step]) -> None:
            for step in steps:
                out.append(step)
                walk(step.substeps)
                for alternative in step.alternatives:
                    walk(alternative.steps)

        walk(self.steps)
        return out

    def to_dict(self) -> dict[str, Any]:
        return asdict(self, dict_factory=_plain_dict)


@dataclass
class Document:
    """A parsed file: its procedures and the problems found in it."""

    path: str
    title: str | None = None
    front_matter: dict[str, Any] = field(default_factory=dict)
    procedures: list[Procedure] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self, dict_factory=_plain_dict)
