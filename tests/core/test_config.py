import os

import pytest

from docverify.config import Config, load_config
from docverify.errors import ConfigError, ExitCode
from docverify.registry import Plugin

FILE = """\
jobs = 2

[parse]
max_file_bytes = 1000

[policy]
use = "openai"

[policy.openai]
model = "from-file"
"""


class OpenAIPolicy(Plugin):
    name = "openai"

    class Options(Plugin.Options):
        model: str = "default-model"
        temperature: float = 0.0


@pytest.fixture
def project(tmp_path):
    (tmp_path / "docverify.toml").write_text(FILE)
    nested = tmp_path / "docs" / "deep"
    nested.mkdir(parents=True)
    return tmp_path


def test_defaults_without_a_file(tmp_path):
    config = load_config(cwd=tmp_path, environ={})
    assert config.file is None
    assert config.settings.jobs == min(4, os.cpu_count() or 1)
    assert config.settings.console.use == ["sandbox"]
    assert config.origin("jobs") == "default"


def test_file_is_found_upward(project):
    config = load_config(cwd=project / "docs" / "deep", environ={})
    assert config.file == project / "docverify.toml"
    assert config.settings.jobs == 2
    assert config.settings.policy.use == ["openai"]
    assert config.origin("parse.max_file_bytes").endswith("docverify.toml:4")


def test_precedence_cli_over_env_over_file_over_defaults(project):
    environ = {"DOCVERIFY_JOBS": "3", "DOCVERIFY_POLICY__OPENAI__MODEL": "from-env"}
    config = load_config(cwd=project, environ=environ, overrides={"jobs": 4}, override_names={"jobs": "--jobs"})
    assert config.settings.jobs == 4
    assert config.origin("jobs") == "option --jobs"
    options = config.plugin_options("policy", "openai", OpenAIPolicy)
    assert options.model == "from-env"
    assert options.temperature == 0.0
    assert config.origin("policy.openai.model") == "env DOCVERIFY_POLICY__OPENAI__MODEL"
    # an option given as None (not on the command line) does not override
    config = load_config(cwd=project, environ=environ, overrides={"jobs": None})
    assert config.settings.jobs == 3


def test_env_family_shorthand_and_lists(tmp_path):
    config = load_config(cwd=tmp_path, environ={"DOCVERIFY_CHECKER": "actiontrail, judges", "DOCVERIFY_PARSE__INCLUDE": "*.md"})
    assert config.settings.checker.use == ["actiontrail", "judges"]
    assert config.settings.parse.include == ["*.md"]


def test_unknown_key_names_key_file_and_line(project):
    (project / "docverify.toml").write_text("jobs = 2\n\n[parse]\nmax_file_byte = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config(cwd=project, environ={})
    message = str(caught.value)
    assert "docverify.toml:4: unknown key 'parse.max_file_byte'" in message
    assert "did you mean 'max_file_bytes'" in message
    assert caught.value.exit_code == ExitCode.USAGE


def test_unknown_top_level_key(project):
    (project / "docverify.toml").write_text("jobs = 2\npolcy = 'x'\n")
    with pytest.raises(ConfigError, match=r"docverify.toml:2: unknown key 'polcy'"):
        load_config(cwd=project, environ={})


def test_bad_value_from_env_names_the_variable(tmp_path):
    with pytest.raises(ConfigError, match=r"env DOCVERIFY_JOBS: jobs: Input should be a valid integer"):
        load_config(cwd=tmp_path, environ={"DOCVERIFY_JOBS": "many"})


def test_unknown_nested_env_key_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"env DOCVERIFY_PARSE__NOPE: unknown key 'parse.nope'"):
        load_config(cwd=tmp_path, environ={"DOCVERIFY_PARSE__NOPE": "1"})


def test_unrelated_env_vars_are_ignored(tmp_path):
    config = load_config(cwd=tmp_path, environ={"DOCVERIFY_BROWSER": "/usr/bin/chromium", "DOCVERIFY_DEBUG": "1"})
    assert config.settings.jobs == min(4, os.cpu_count() or 1)


def test_invalid_toml_names_the_file(project):
    (project / "docverify.toml").write_text("jobs = = 2\n")
    with pytest.raises(ConfigError, match=r"docverify.toml: invalid TOML"):
        load_config(cwd=project, environ={})


def test_explicit_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(path=tmp_path / "nope.toml", cwd=tmp_path, environ={})


def test_plugin_option_errors_name_the_table_and_line(project):
    (project / "docverify.toml").write_text("[policy]\nuse = 'openai'\n\n[policy.openai]\nmodle = 'x'\n")
    config = load_config(cwd=project, environ={})
    with pytest.raises(ConfigError, match=r"docverify.toml:5: unknown key 'policy.openai.modle' \(did you mean 'model'\?\)"):
        config.plugin_options("policy", "openai", OpenAIPolicy)


def test_plugin_table_for_an_uninstalled_plugin(project):
    config = load_config(cwd=project, environ={})
    with pytest.raises(ConfigError, match=r"docverify.toml:9: \[policy.openai\]: unknown policy 'openai'; valid policies: literal"):
        config.check_plugin_tables({"policy": ["literal"]})
    config.check_plugin_tables({"policy": ["openai"]})  # installed: fine


def test_config_dataclass_origin_of_table_set_by_env():
    config = Config(settings=None, origins={"policy.openai.model": "env X"})  # type: ignore[arg-type]
    assert config.origin("policy.openai") == "env X"
