"""README's configuration table is the one scripts/settings_table.py generates from
the settings' declarations in socialpub/config.py."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script():
    spec = importlib.util.spec_from_file_location("settings_table", ROOT / "scripts" / "settings_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_configuration_table_is_the_generated_one():
    script = load_script()
    readme = (ROOT / "README.md").read_text()
    assert script.START in readme and script.END in readme, "README.md lost its settings markers"
    expected = script.readme_with(readme, script.table())
    assert readme == expected, (
        "README.md's configuration table differs from the settings declared in socialpub/config.py: "
        "run `python scripts/settings_table.py --write`"
    )


def test_every_setting_has_a_row():
    from socialpub.config import DECLARED, READ_ELSEWHERE

    table = load_script().table()
    for env in [declared.setting.env for declared in DECLARED] + [variable.env for variable in READ_ELSEWHERE]:
        assert f"| `{env}` |" in table, env


def test_rewriting_replaces_only_between_the_markers():
    script = load_script()
    readme = f"intro\n\n{script.START}\nold table\n{script.END}\n\nafter\n"
    assert script.readme_with(readme, "| new |\n") == f"intro\n\n{script.START}\n| new |\n{script.END}\n\nafter\n"
