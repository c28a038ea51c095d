"""Chinese procedures: the literal policy on Chinese pages, a zh-CN browser per
procedure, and ``docverify check`` on Chinese docs against the Chinese sandbox.

- the literal policy, turn by turn, on hand-written Chinese snapshots (no browser);
- the playwright executor: a session in the procedure's locale asks the console
  for that language (``Accept-Language``), whatever the shared sign-in cookies say;
- ``docverify check``: a Chinese and an English procedure in one run, each in its
  language; and the Chinese AlibabaCloudDocs of the corpus.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from corpus_location import real_docs_root

from docverify.check.verdict import FindingKind
from docverify.cli import cli
from docverify.execute.actions import Action, ActionKind, Observation
from docverify.execute.executor import browser_locale
from docverify.parse.parser import parse_text
from docverify.report.trajectory import StepStatus
from docverify.task import make_task
from docverify_literal.policy import LiteralPolicy

LOOP = asyncio.new_event_loop()  # one loop, as in a run: the episode is an async generator


def episode(markdown: str, region: str = "cn-hangzhou"):
    document = parse_text(textwrap.dedent(markdown), "doc.md")
    assert document.procedures, document.diagnostics
    task = make_task(document.procedures[0], suffix="abc123", default_region=region)
    return LiteralPolicy().start(task)


def page(snapshot: str) -> Observation:
    return Observation("http://console.test/x", "控制台", textwrap.dedent(snapshot).strip("\n"))


def act(ep, observation: Observation) -> Action:
    return LOOP.run_until_complete(ep.next_action(observation))


HOME = page('''
    - banner [ref=e1]:
      - link "负载均衡SLB" [ref=e2]
      - link "应用型负载均衡ALB" [ref=e3]
      - link "对象存储OSS" [ref=e4]
      - link "访问控制RAM" [ref=e5]
      - combobox "地域" [ref=e6]:
        - option "华东1（杭州）" [selected]
        - option "华东2（上海）"
''')

BUCKETS = page('''
    - navigation "对象存储OSS导航" [ref=e10]:
      - link "概览" [ref=e11]
      - link "Bucket列表" [ref=e12]
    - main [ref=e13]:
      - button "创建 Bucket" [ref=e14]
''')

CREATE = page('''
    - main [ref=e13]:
      - dialog "创建Bucket" [ref=e20]:
        - textbox "Bucket名称" [ref=e21]
        - group "读写权限" [ref=e22]:
          - radio "私有" [checked] [ref=e23]
          - radio "公共读" [ref=e24]
          - radio "公共读写" [ref=e25]
        - combobox "服务端加密" [ref=e26]:
          - option "无" [selected]
          - option "OSS完全托管"
          - option "KMS"
        - group "版本控制" [ref=e27]:
          - radio "开通" [ref=e28]
          - radio "不开通" [checked] [ref=e29]
        - button "确定" [ref=e30]
''')

BUCKET_DOC = """
    # 创建存储空间

    1.  登录[OSS管理控制台](https://oss.console.aliyun.com/)。

    2.  单击**Bucket列表**，然后单击**创建Bucket**。

        您也可以单击**概览**，然后单击右上角**创建Bucket**。

    3.  在创建Bucket面板，按如下说明配置各项参数。

        |参数|是否必选|描述|
        |--|----|--|
        |**Bucket名称**|是|填写Bucket名称。|
        |**读写权限**|是|选择Bucket的读写权限。     -   **私有（private）**：只有拥有者可以读写。
        -   **公共读（public-read）**：任何人可以读。 |
        |**服务端加密**|否|选择是否开启服务器端加密。     -   **服务端加密方式**：选择Object的加密方式。
            -   **无**：不启用服务器端加密。
            -   **OSS完全托管**：使用OSS托管的密钥进行加密。 |
        |**版本控制**|否|选择是否开通版本控制功能。     -   **开通**：保存历史版本。
        -   **不开通**：不保存历史版本。 |

    4.  单击**确定**。
"""


def test_a_chinese_procedure_is_followed_by_its_chinese_labels():
    ep = episode(BUCKET_DOC)
    assert ep.procedure.language == "zh"
    assert act(ep, HOME).ref == "e4"  # OSS管理控制台: the console link named for the product
    assert act(ep, BUCKETS).ref == "e12"
    create = act(ep, BUCKETS)
    assert (create.kind, create.ref) == (ActionKind.CLICK, "e14")  # "创建 Bucket" is 创建Bucket, not renamed
    fill = act(ep, CREATE)
    assert (fill.kind, fill.ref, fill.value) == (ActionKind.FILL, "e21", "docverify-bucket-abc123")
    # the table lists choices and picks none: 读写权限's 私有（private） is the console's 私有 (its API
    # value annotated), checked already; 服务端加密 lists a sub-setting first, but 无 is listed and
    # selected; 版本控制's 不开通 is listed and checked: nothing to enter
    assert act(ep, CREATE).ref == "e30"
    done = act(ep, BUCKETS)
    assert (done.kind, done.status) == (ActionKind.DONE, "success")
    # "您也可以单击概览…" is another way to the same panel, not a further step
    assert ep.step_status["2a.1"] is StepStatus.SKIPPED


def test_an_also_paragraph_in_english_is_another_way_too():
    ep = episode("""
        # Create a bucket

        1. Click **Buckets**. Click **Create Bucket**.

            You can also click **Overview**, and then click **Create Bucket**.

        2. Click **OK**.
    """)
    buckets = page('''
        - link "Overview" [ref=e1]
        - link "Buckets" [ref=e2]
        - button "Create Bucket" [ref=e3]
        - dialog "Create Bucket" [ref=e4]:
          - button "OK" [ref=e5]
    ''')
    assert [act(ep, buckets).ref for _ in range(3)] == ["e2", "e3", "e5"]
    listed = page('''
        - link "Overview" [ref=e1]
        - link "Buckets" [ref=e2]
    ''')
    assert act(ep, listed).kind is ActionKind.DONE and ep.step_status["1a.1"] is StepStatus.SKIPPED


def test_methods_of_a_step_without_actions_follow_the_first():
    ep = episode("""
        # Add a rule

        1. Add a rule in one of the following ways:
            -   Method 1: Quick add

                Click **Quick Add**.

            -   Method 2: Manual add

                Click **Add Rule**.
    """)
    rules = page('''
        - button "Quick Add" [ref=e1]
        - button "Add Rule" [ref=e2]
    ''')
    assert act(ep, rules).ref == "e1"
    assert act(ep, rules).kind is ActionKind.DONE and ep.step_status["1b.1"] is StepStatus.SKIPPED


def test_the_region_selector_in_chinese():
    ep = episode("""
        # 选择地域

        1.  在顶部菜单栏左上角处，选择地域。
    """, region="cn-shanghai")
    choose = act(ep, HOME)
    assert (choose.kind, choose.ref, choose.value) == (ActionKind.SELECT, "e6", "华东2（上海）")


@pytest.mark.parametrize(("console", "ref"), [("负载均衡管理控制台", "e2"), ("RAM控制台", "e5"),
                                              ("对象存储OSS控制台", "e4")])
def test_a_chinese_console_name_finds_the_product_link(console, ref):
    ep = episode(f"""
        # 登录

        1.  登录[{console}](https://console.aliyun.com/)。
    """)
    opened = act(ep, HOME)
    assert (opened.kind, opened.ref) == (ActionKind.CLICK, ref)
    assert act(ep, HOME).kind is ActionKind.DONE  # no finding: the same product


def test_a_list_the_doc_says_to_choose_from_gets_a_real_choice():
    ep = episode("""
        # 创建实例

        1.  完成以下配置。

            |配置|说明|
            |:-|:-|
            |**VPC**|选择一个VPC。|
            |**功能版本**|选择一种功能版本：**基础版**或**标准版**。|
    """)
    form = page('''
        - main [ref=e1]:
          - combobox "VPC" [ref=e2]:
            - option "请选择" [selected]
            - option "default-vpc (vpc-bp1)"
          - group "功能版本" [ref=e3]:
            - radio "基础版" [checked] [ref=e4]
            - radio "标准版" [ref=e5]
    ''')
    vpc = act(ep, form)
    assert (vpc.kind, vpc.ref, vpc.value) == (ActionKind.SELECT, "e2", "default-vpc (vpc-bp1)")
    assert act(ep, form).kind is ActionKind.DONE  # 基础版 is listed and checked: nothing to do


def test_a_listed_choice_the_page_lacks_is_rejected():
    ep = episode("""
        # 创建Bucket

        1.  配置参数。

            |参数|描述|
            |--|--|
            |**存储类型**|**标准存储**、**低频访问**或**深度冷归档**。|
    """)
    form = page('''
        - group "存储类型" [ref=e1]:
          - radio "归档存储" [checked] [ref=e2]
          - radio "低频访问" [ref=e3]
    ''')
    first_offered = act(ep, form)
    assert (first_offered.kind, first_offered.ref) == (ActionKind.CHECK, "e3")  # 标准存储 is not offered
    none = episode("""
        # 创建Bucket

        1.  配置参数。

            |参数|描述|
            |--|--|
            |**存储类型**|**深度冷归档**或**智能分层**。|
    """)
    flag = act(none, form)
    assert flag.kind is ActionKind.FLAG_STEP and flag.finding.kind is FindingKind.VALUE_REJECTED


def test_a_blank_chinese_name_gets_a_generated_one():
    ep = episode("""
        # 创建用户

        1.  输入**登录名称**。
    """)
    form = page('''
        - textbox "登录名称" [ref=e1]
    ''')
    fill = act(ep, form)
    assert (fill.kind, fill.ref, fill.value) == (ActionKind.FILL, "e1", "docverify-abc123")


def test_procedures_run_in_the_locale_of_their_language():
    assert (browser_locale("zh"), browser_locale("en"), browser_locale("fr")) == ("zh-CN", "en-US", None)


# ------------------------------------------------------------------ the browser


@pytest.fixture(scope="module")
def endpoint():
    from docverify_sandbox.console import SandboxConsole

    with SandboxConsole(SandboxConsole.Options(latency_ms=0, release="2021-06")).start() as endpoint:
        yield endpoint


@pytest.mark.browser
def test_a_session_asks_the_console_for_its_locale(endpoint, tmp_path, chromium):
    from docverify_playwright.executor import PlaywrightExecutor

    async def scenario():
        async with PlaywrightExecutor().open(endpoint, tmp_path) as xrun:
            assert "aliyun_lang" not in {c["name"] for c in xrun.storage_state["cookies"]}  # sign-in sets none
            async with xrun.session("zh", locale="zh-CN") as session:
                home = await session.observe()
                assert "对象存储OSS" in home.snapshot and "OSS console" not in home.snapshot
                assert await session.page.evaluate("navigator.language") == "zh-CN"
            async with xrun.session("en", locale="en-US") as session:
                assert "OSS console" in (await session.observe()).snapshot
            async with xrun.session("default") as session:  # the browser's own language
                assert await session.page.evaluate("document.documentElement.lang") in ("en", "zh-CN")

    asyncio.run(scenario())


ZH_DOC = """\
    # 管理存储空间

    <!-- docverify:
    id: zh-bucket
    expect:
      - {event: PutBucket, service: Oss}
    -->
    ## 创建存储空间

    1.  登录[OSS管理控制台](https://oss.console.aliyun.com/)。

    2.  单击**Bucket列表**，然后单击**创建Bucket**。

    3.  在创建Bucket面板，配置以下参数。

        |参数|取值|说明|
        |--|--|--|
        |**Bucket名称**|`docverify-zh-<suffix>`|Bucket的名称。|
        |**存储类型**|**低频访问**|适合较低访问频率的数据。|
        |**读写权限**|**私有（private）**|只有拥有者可以读写。|

    4.  单击**确定**。

    <!-- docverify:
    id: zh-group
    expect:
      - {event: CreateGroup, service: Ram}
    -->
    ## 创建用户组

    1.  登录[RAM控制台](https://ram.console.aliyun.com/)。

    2.  在左侧导航栏，选择**人员管理** \\> **用户组**。

    3.  单击**创建用户组**。

    4.  在创建用户组面板，配置以下参数。

        |参数|取值|
        |--|--|
        |**用户组名称**|`docverify-group-<suffix>`|
        |**显示名称**|运维组|

    5.  单击**确定**。
"""

EN_DOC = """\
    # Buckets

    <!-- docverify:
    id: en-bucket
    expect:
      - {event: PutBucket, service: Oss}
    -->
    ## Create a bucket

    1. Log on to the OSS console.
    2. In the left-side navigation pane, click **Buckets**.
    3. Click **Create Bucket**.
    4. Configure the following parameters.

        |Parameter|Value|
        |---|---|
        |**Bucket Name**|`docverify-en-<suffix>`|
        |**Access Control List \\(ACL\\)**|**Private**|

    5. Click **OK**.
"""


def check(paths, output: Path, chromium, *options: str) -> dict:
    args = ["check", *map(str, paths), "--no-store", "--report", "json", "--output", str(output),
            "--browser-path", str(chromium.path), *options]
    env = {"DOCVERIFY_CONSOLE": None, "DOCVERIFY_POLICY": None, "DOCVERIFY_CONSOLE__SANDBOX__RELEASE": None,
           "DOCVERIFY_CONFIG": None, "DOCVERIFY_JOBS": None}
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    report = output / "docverify.json"
    assert report.exists(), result.output
    data = json.loads(report.read_text(encoding="utf-8"))
    data["exit_code"], data["output"] = result.exit_code, result.output
    return data


def clicked(result: dict) -> list[str]:
    return [t["action"]["target"] for t in result["turns"] if t["action"]["kind"] in ("click", "fill", "check")]


@pytest.mark.browser
@pytest.mark.slow
def test_check_runs_each_procedure_in_its_language(tmp_path, chromium):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "zh.md").write_text(textwrap.dedent(ZH_DOC), encoding="utf-8")
    (docs / "en.md").write_text(textwrap.dedent(EN_DOC), encoding="utf-8")
    report = check([docs], tmp_path / "out", chromium, "--jobs", "2", "--set", "console.sandbox.release=2021-06")
    results = {r["id"]: r for r in report["results"]}
    assert {k: r["verdict"] for k, r in results.items()} == {"zh-bucket": "PASS", "zh-group": "PASS",
                                                             "en-bucket": "PASS"}, report["output"]
    assert report["exit_code"] == 0
    assert "button '创建Bucket'" in clicked(results["zh-bucket"])
    assert "link '用户组'" in clicked(results["zh-group"])
    assert "button 'Create Bucket'" in clicked(results["en-bucket"])


# ------------------------------------------------------------------ the Chinese AlibabaCloudDocs

ALIBABA = real_docs_root() / "alibaba_AlibabaCloudDocs"


@pytest.fixture(scope="module")
def zh_corpus_run(chromium, tmp_path_factory):
    docs = [ALIBABA / "oss" / "zh" / "创建存储空间.md", ALIBABA / "slb" / "zh" / "ALB_创建实例.md"]
    return check(docs, tmp_path_factory.mktemp("zh-corpus"), chromium, "--jobs", "2",
                 "--set", "console.sandbox.release=2021-06")


def corpus_result(run: dict, title: str) -> dict:
    return next(r for r in run["results"] if r["title"] == title)


@pytest.mark.browser
@pytest.mark.slow
def test_the_chinese_create_bucket_doc_passes(zh_corpus_run):
    result = corpus_result(zh_corpus_run, "创建存储空间")
    assert result["verdict"] == "PASS", result["reason"]
    assert clicked(result)[:3] == ["link '对象存储OSS'", "link 'Bucket列表'", "button '创建Bucket'"]


@pytest.mark.browser
@pytest.mark.slow
def test_the_chinese_alb_doc_drifts_only_at_the_terms_the_sandbox_lacks(zh_corpus_run):
    """步骤一 of ALB 创建实例: every Chinese label up to the order is found; the sandbox's
    Confirm Order page has no terms check box, so that step is the one finding."""
    result = corpus_result(zh_corpus_run, "步骤一：创建应用型负载均衡实例")
    assert result["verdict"] == "DRIFT"
    assert [(f["kind"], f["line"]) for f in result["findings"]] == [("element_not_found", 44)]
    assert "我已阅读并同意" in result["findings"][0]["expected"]
    assert clicked(result)[-1] == "button '立即开通'" and result["check"]["goal_reached"]  # the instance was created
