"""Label lookup in accessibility snapshots, on a snapshot taken from the sandbox console."""

import textwrap

from docverify.execute.locate import CLICKABLE, FILLABLE, MatchKind, locate, normalize, parse_snapshot, similarity

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


# -- Chinese labels: no spaces between words, full-width punctuation, API values in parentheses

ZH_SNAPSHOT = '''\
- main [ref=e1]:
  - button "创建 Bucket" [ref=e2]
  - group "读写权限" [ref=e3]:
    - radio "私有" [checked] [ref=e4]
    - radio "公共读" [ref=e5]
    - radio "公共读写" [ref=e6]
  - combobox "协议类型" [ref=e7]:
    - option "全部ICMP（IPv4）" [selected]
    - option "全部ICMP（IPv6）"
  - button "下一步：网络和安全组设置" [ref=e8]
  - button "创建实例" [ref=e9]
'''


def test_chinese_labels_ignore_spaces_next_to_chinese_characters():
    assert normalize("创建 Bucket") == normalize("创建Bucket") == "创建bucket"
    assert normalize("应用型负载均衡 ALB") == normalize("应用型负载均衡ALB")
    located = locate("创建Bucket", parse_snapshot(ZH_SNAPSHOT), CLICKABLE)
    assert located.kind is MatchKind.NORMALIZED and located.element.ref == "e2"


def test_chinese_labels_ignore_full_width_punctuation():
    located = locate("下一步:网络和安全组设置", parse_snapshot(ZH_SNAPSHOT), CLICKABLE)
    assert located.kind is MatchKind.NORMALIZED and located.element.ref == "e8"


def test_an_api_value_in_parentheses_is_an_annotation_of_a_chinese_option():
    elements = parse_snapshot(ZH_SNAPSHOT)
    assert normalize("私有（private）") == normalize("私有")
    assert normalize("公共读写（public-read-write）") == normalize("公共读写") != normalize("公共读")
    located = locate("公共读（public-read）", elements, ("radio",))
    assert located.kind is MatchKind.NORMALIZED and located.element.ref == "e5"
    # a parenthesised part that is no API value stays part of the label
    assert normalize("全部ICMP（IPv4）") != normalize("全部ICMP（IPv6）")
    located = locate("全部ICMP", elements, ("option",))  # not the same label: two could be it
    assert located.element is None and located.ambiguous
    assert located.nearest == ("全部ICMP（IPv4）", "全部ICMP（IPv6）")


def test_english_labels_keep_their_spaces_and_parentheses():
    assert normalize("Access Control List (ACL)") == "access control list acl"
    assert normalize("Public Read (public-read)") == "public read public read"
    assert normalize("Create  Bucket") == "create bucket" != normalize("CreateBucket")


def test_a_renamed_chinese_button_is_a_close_match():
    located = locate("创建ECS实例", parse_snapshot(ZH_SNAPSHOT), CLICKABLE)
    assert located.kind is MatchKind.CLOSE and located.element.ref == "e9"
    assert similarity("创建实例", "创建ECS实例") >= 0.8


def test_inside_counts_unnamed_ancestors_and_names_when_asked():
    elements = parse_snapshot(textwrap.dedent('''
        - main [ref=e1]:
          - form [ref=e2]:
            - alert [ref=e3]: Name is required.
          - dialog "Delete" [ref=e4]:
            - button "OK" [ref=e5]
    ''').strip("\n"))
    alert = next(e for e in elements if e.role == "alert")
    ok = next(e for e in elements if e.name == "OK")
    assert alert.inside("main") and alert.inside("form") and not alert.inside("dialog")
    assert ok.inside("dialog", "Delete") and not ok.inside("dialog", "Release") and not ok.inside("form")


def test_a_text_that_yaml_quotes_is_still_the_elements_name():
    elements = parse_snapshot('- main [ref=e1]:\n  - alert [ref=e2]: "InvalidCidrBlock.Malformed: The \\"CIDR\\" block is invalid."\n'
                              '  - cell [ref=e3]: "Status: Running"')
    assert [e.name for e in elements[1:]] == ['InvalidCidrBlock.Malformed: The "CIDR" block is invalid.', "Status: Running"]


def test_the_text_after_a_fields_name_is_its_value():
    field, plain = parse_snapshot('- textbox "IPv4 CIDR Block" [ref=e2]: 192.168.0.0/16\n- button "OK" [ref=e3]')
    assert (field.name, field.text) == ("IPv4 CIDR Block", "192.168.0.0/16") and plain.text == ""
