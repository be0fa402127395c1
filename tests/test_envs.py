"""The conda environments (`--sdm conda`): every rule's environment has what its script imports.

Conda environments cannot be built here (no channel access), so each is checked by what it
would hold: the core dependencies and its plmfair extra (envs/*.yaml installs ``..[extra]``),
with what those need in turn. For each environment, every script of the rules that use it has
its imports run in a Python where every other package of the project is unimportable (the trick
the torch-free DAG test uses).
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import yaml
from conftest import REPO, rule_bodies

# Import names of the distributions of plmfair's extras (the packages a test may block).
IMPORT_NAMES = {
    "torch": "torch",
    "transformers": "transformers",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "huggingface-hub": "huggingface_hub",
    "tqdm": "tqdm",
    "sentencepiece": "sentencepiece",
    "protobuf": "google.protobuf",
    "sacremoses": "sacremoses",
    "accelerate": "accelerate",
    "spacy": "spacy",
    "eflomal": "eflomal",
    "scipy": "scipy",
    "statsmodels": "statsmodels",
    "matplotlib": "matplotlib",
    "tabulate": "tabulate",
    "jinja2": "jinja2",
    "scikit-learn": "sklearn",
    "snakemake": "snakemake",
    "snakemake-executor-plugin-slurm": "snakemake_executor_plugin_slurm",
}


def _name(requirement: str) -> str:
    return re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _with_dependencies(names: set[str]) -> set[str]:
    """The distributions and, transitively, everything they require when installed."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        todo += [_name(r) for r in requires if "extra ==" not in r]
    return seen


def rule_envs() -> dict[str, tuple[str, str]]:
    """rule -> (its conda environment file, its script), read from workflow/rules/*.smk; a library
    job's script is named by the module of its function (``job`` in its params, plmfair.jobs)."""
    out = {}
    for smk in sorted((REPO / "workflow" / "rules").glob("*.smk")):
        for name, block in rule_bodies(smk.read_text()).items():
            env = re.search(r'conda:\s*\n\s*"\.\./\.\./envs/(\w+\.yaml)"', block)
            script = re.search(r'script:\s*\n\s*"\.\./scripts/(\w+\.py)"', block)
            job = re.search(r'\bjob="([\w.]+):\w+"', block)
            out[name] = (
                env.group(1) if env else None,
                job.group(1) if job else script.group(1) if script else None,
            )
    return out


RULES = rule_envs()
EXTRAS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def env_extra(env: str) -> str:
    deps = yaml.safe_load((REPO / "envs" / env).read_text())["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    return next(p for p in pip if p.startswith("..")).removeprefix("..[").removesuffix("]")


def test_every_rule_with_a_script_has_an_environment():
    assert [rule for rule, (env, script) in RULES.items() if script and not env] == []
    assert {env for env, _ in RULES.values() if env} == {p.name for p in (REPO / "envs").glob("*.yaml")}


def script_imports(script: str) -> str:
    """The import statements of a workflow script, as source; for a library job, its script's and
    the function's module."""
    if not script.endswith(".py"):
        return f"{script_imports('library_job.py')}\nimport {script}"
    tree = ast.parse((REPO / "workflow" / "scripts" / script).read_text())
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom))


@pytest.mark.parametrize("env", sorted({env for env, _ in RULES.values() if env}))
def test_each_environment_imports_the_scripts_of_its_rules(env, tmp_path):
    extra = env_extra(env)
    allowed = _with_dependencies({_name(d) for d in EXTRAS["dependencies"] + EXTRAS["optional-dependencies"][extra]})
    blocked = sorted(module for dist, module in IMPORT_NAMES.items() if dist not in allowed)
    for module in blocked:
        folder = tmp_path / Path(*module.split("."))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text(f"raise ImportError('{module} is not in envs/{env}')\n")
        if "." in module:
            (tmp_path / module.split(".")[0] / "__init__.py").touch()
    scripts = sorted({script for e, script in RULES.values() if e == env and script})
    code = "\n".join(f"# {script}\n{script_imports(script)}" for script in scripts)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert proc.returncode == 0, f"envs/{env} ([{extra}]) blocks {blocked}:\n{proc.stderr[-2000:]}"
