"""Label lookup in accessibility snapshots, on a snapshot taken from the sandbox console."""

from docverify.locate import CLICKABLE, FILLABLE, MatchKind, locate, normalize, parse_snapshot, similarity

SNAPSHOT = '''\
- generic [active] [ref=e1]:
  - banner [ref=e2]:
    - navigation "Products" [ref=e3]:
      - link "ECS console" [ref=e4] [cursor=pointer]:
        - /url: /console/ecs
    - combobox "Region" [ref=e5]:
      - option "China (Hangzhou)" [selected]
      - option "Singapore"
  - navigation "Elastic Compute Service navigation" [ref=e6]:
    - group [ref=e7]:
      - text: Network & Security
      - list [ref=e8]:
        - listitem [ref=e9]:
          - link "Security Groups" [ref=e10] [cursor=pointer]:
            - /url: /console/ecs/security_group
  - main [ref=e11]:
    - heading "Instances" [level=1] [ref=e12]
    - button "Create ECS Instance" [ref=e13] [cursor=pointer]
    - textbox "Instance ID/Name" [ref=e14]
    - checkbox "Release Protection" [checked] [ref=e15]
    - button "Say \\"hi\\"" [ref=e16]
    - dialog "Stop Instance" [ref=e17]:
      - button "OK" [ref=e18] [cursor=pointer]
      - button "Cancel" [ref=e19]
  - button "OK" [ref=e20]
'''


def test_parse_snapshot_roles_names_refs_and_ancestors():
    elements = parse_snapshot(SNAPSHOT)
    by_ref = {e.ref: e for e in elements if e.ref}
    assert by_ref["e13"].role == "button" and by_ref["e13"].name == "Create ECS Instance"
    assert by_ref["e10"].ancestors[-3:] == ("group", "list", "listitem")
    assert by_ref["e15"].attributes == ("checked",)
    assert by_ref["e16"].name == 'Say "hi"'
    assert by_ref["e18"].in_dialog and not by_ref["e20"].in_dialog
    options = [e for e in elements if e.role == "option"]
    assert [o.name for o in options] == ["China (Hangzhou)", "Singapore"] and options[0].ref is None


def test_exact_match():
    located = locate("Security Groups", parse_snapshot(SNAPSHOT), CLICKABLE)
    assert located.kind is MatchKind.EXACT and located.element.ref == "e10"


def test_normalized_match_ignores_case_and_punctuation():
    located = locate("instance id / name", parse_snapshot(SNAPSHOT), FILLABLE)
    assert located.kind is MatchKind.NORMALIZED and located.element.ref == "e14"


def test_close_match_for_a_renamed_button():
    located = locate("Create Instance", parse_snapshot(SNAPSHOT), CLICKABLE)
    assert located.kind is MatchKind.CLOSE
    assert located.element.name == "Create ECS Instance"
    assert "Create ECS Instance" in located.nearest


def test_no_match_lists_nearest_candidates():
    located = locate("Delete Bucket", parse_snapshot(SNAPSHOT), CLICKABLE)
    assert located.element is None and located.kind is None
    assert 1 <= len(located.nearest) <= 3


def test_dialog_button_wins_over_the_page_behind_it():
    located = locate("OK", parse_snapshot(SNAPSHOT), CLICKABLE)
    assert located.element.ref == "e18"


def test_roles_restrict_the_lookup():
    elements = parse_snapshot(SNAPSHOT)
    assert locate("Region", elements, FILLABLE).element.role == "combobox"
    assert locate("Instances", elements, CLICKABLE).element is None  # a heading is not clickable


def test_normalize_and_similarity():
    assert normalize("Network & Security") == normalize("network and security")
    assert normalize("ＯＫ") == "ok"
    assert similarity("Create Instance", "Create ECS Instance") >= 0.8
    assert similarity("Create Instance", "Delete Snapshot") < 0.8
    assert similarity("创建实例", "创建 ECS 实例") >= 0.6
