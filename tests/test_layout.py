"""The library's layout holds as docs/architecture.md draws it: the layers import one way and no
package's modules import each other in a circle (import-linter's contracts in pyproject.toml), a
study is one package, few modules sit at the top, a module name means one thing, and an import that
waits inside a function says why; the module of a job loads only the heavy packages that
kind of job needs."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import REPO

from plmfair.studies import CLOZE_TASK, STUDIES

LIBRARY = REPO / "src" / "plmfair"
MAX_TOP_LEVEL_MODULES = 15


def _study_packages() -> set[str]:
    """The packages the study registry's entries live in (``plmfair.cloze:MOZART`` -> cloze)."""
    return {STUDIES.module_of(name).split(".")[1] for name in STUDIES}


def test_import_contracts_hold():
    """``lint-imports`` (import-linter) checks the layers and the absence of circles, with the imports
    inside functions counted."""
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(lint), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 kept, 0 broken" in proc.stdout


def test_a_broken_layer_is_caught(tmp_path):
    """The contract can fail: a copy of the library where the errors import the command line breaks it."""
    copy = tmp_path / "src"
    subprocess.run(["cp", "-r", str(REPO / "src"), str(copy)], check=True)
    errors = copy / "plmfair" / "errors.py"
    errors.write_text(errors.read_text() + "\n\ndef _late():\n    from plmfair import cli  # noqa: F401\n")
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    lint = Path(sys.executable).with_name("lint-imports")
    proc = subprocess.run(
        [str(lint), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode != 0 and "plmfair.errors is not allowed to import plmfair.cli" in proc.stdout


def test_few_modules_at_the_top_and_each_study_one_package():
    top = sorted(p.name for p in LIBRARY.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top
    studies = _study_packages()
    assert studies == {"cloze", "crows_pairs"}
    for package in studies:
        assert (LIBRARY / package / "__init__.py").is_file()
        assert (LIBRARY / package / "plan.py").is_file() and (LIBRARY / package / "outputs.py").is_file()


# Modules outside the study packages that still name a study (a string literal equal to a study's name),
# with how many times: what is left of issue 63's study hooks (each study package registers itself in its
# config.schema.yaml).
# The plan, the record's results and the models that run ask the studies; a new site fails here, and
# moving one into its study lowers its count here.
STUDY_NAMES_LEFT = {
    "studies.py": 1,  # the cloze task's name
}


def test_no_module_outside_a_study_names_one_but_those_left():
    names = set(STUDIES)
    found: dict[str, int] = defaultdict(int)
    studies = _study_packages()
    for path in LIBRARY.rglob("*.py"):
        relative = path.relative_to(LIBRARY).as_posix()
        if relative.split("/")[0] in studies:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found[relative] += 1
    assert dict(found) == STUDY_NAMES_LEFT


def test_no_module_outside_a_study_imports_one_or_names_one_in_code():
    """Outside the study packages no module imports a study's package, and no function, class, variable or
    attribute is named for a study: the layers above the plan ask the study record (:mod:`plmfair.studies`)
    instead. ("cloze" stays the name of the gap-filling task.)"""
    packages = {f"plmfair.{package}" for package in _study_packages()}
    studies = set(STUDIES) - {CLOZE_TASK}
    found = []
    for path in LIBRARY.rglob("*.py"):
        relative = path.relative_to(LIBRARY).as_posix()
        if relative.split("/")[0] in _study_packages():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom | ast.Import):
                modules = [alias.name for alias in node.names] + [getattr(node, "module", None) or ""]
                found += [f"{relative}:{node.lineno} imports {m}" for m in modules if m.startswith(tuple(packages))]
            identifier = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "name", None)
            if isinstance(identifier, str) and any(study in identifier.lower() for study in studies):
                found.append(f"{relative}:{node.lineno} names {identifier}")
    assert found == []


def test_the_shared_rule_files_name_no_study():
    """The Snakefile and the rule files every study shares read the studies through the plan; a study's
    helpers live in its own rule files (comments aside)."""
    studies = "|".join(STUDIES)
    shared = [REPO / "Snakefile"] + [
        path
        for path in (REPO / "workflow" / "rules").glob("*.smk")
        if not any(path.name in study.rule_files for study in STUDIES.values())
    ]
    named = [
        f"{path.name}:{number}: {line.strip()}"
        for path in shared
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(rf"\b({studies})", line.split("#")[0])
    ]
    assert len(shared) >= 7 and not named, named


def test_a_module_name_is_used_once_but_for_the_same_role_in_each_study():
    """``plan.py`` or ``tables.py`` may be in every study package; any other name is one module."""
    where = defaultdict(set)
    for path in LIBRARY.rglob("*.py"):
        if path.name != "__init__.py":
            where[path.stem].add(path.relative_to(LIBRARY).parts[0] if len(path.relative_to(LIBRARY).parts) > 1 else "")
    studies = _study_packages()
    twice = {name: places for name, places in where.items() if len(places) > 1 and not places <= studies}
    assert not twice, twice
    # nor a module beside a package of the same name (compare.py and a compare/ folder)
    packages = {p.name for p in LIBRARY.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert not packages & {p.stem for p in LIBRARY.glob("*.py")}


def test_an_import_inside_a_function_says_why():
    bad = []
    for path in sorted(LIBRARY.rglob("*.py")):
        lines = path.read_text().splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    k = node.lineno - 2  # the comment may sit above a block of such imports
                    while k >= 0 and lines[k].strip().startswith(("import ", "from ")):
                        k -= 1
                    if "#" not in lines[node.lineno - 1] and not lines[k].strip().startswith("#"):
                        bad.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not bad, bad


@pytest.mark.parametrize(
    "module, light",
    [
        # a table job renders what the statistics jobs computed: pandas, no scipy
        ("plmfair.cloze.tables", ("scipy", "torch", "matplotlib")),
        ("plmfair.crows_pairs.tables", ("scipy", "torch", "matplotlib")),
        # a figure job draws what the statistics jobs computed: matplotlib, no scipy
        ("plmfair.crows_pairs.figures", ("scipy", "torch")),
        ("plmfair.cloze.figures", ("scipy", "torch")),
        ("plmfair.rendering.plots", ("scipy", "torch")),
        # a tokenize or tag job: spaCy, no torch (plmfair.cloze.construction.pos)
        ("plmfair.cloze.construction.pos", ("scipy", "torch", "spacy")),
        # the command line: plmfair run hands the work to Snakemake, plmfair --help answers at once
        ("plmfair.cli", ("pandas", "pyarrow", "scipy", "torch", "matplotlib")),
    ],
)
def test_a_job_imports_only_its_own_dependency_set(module, light):
    """In a process of its own, as a job is, importing the module loads none of the heavy packages
    another kind of job needs (each costs a second or so in every job that imports it)."""
    code = f"import sys, {module}; print(' '.join(p for p in {light!r} if p in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == []


LONG_FUNCTION_LINES = 80
# the functions over LONG_FUNCTION_LINES a docstring may explain, and the longest a module may grow
MOST_EXPLAINED, LONG_MODULE_LINES = 3, 600


def test_a_function_over_80_lines_says_why_in_its_docstring_and_few_do():
    """A function longer than a screen is split, or its docstring says why it is one ("Long because ..."); at
    most three are, and no module is longer than 600 lines."""
    unexplained, explained = [], []
    for path in sorted(LIBRARY.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= LONG_MODULE_LINES, f"{path.relative_to(LIBRARY)}: split it by subject"
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                name = f"{path.relative_to(LIBRARY)}:{node.lineno} {node.name} ({lines} lines)"
                if lines > LONG_FUNCTION_LINES:
                    long_because = "Long because" in (ast.get_docstring(node) or "")
                    (explained if long_because else unexplained).append(name)
    assert unexplained == []
    assert len(explained) <= MOST_EXPLAINED, explained


def test_the_plan_facade_holds_only_what_the_rules_call():
    """``plmfair.plan`` re-exports for the rule files; Python modules import from the module that defines a name."""
    from plmfair import plan

    rules = (REPO / "Snakefile").read_text() + "".join(
        p.read_text() for p in (REPO / "workflow" / "rules").glob("*.smk")
    )
    assert [name for name in plan.__all__ if not re.search(rf"\bplan\.{name}\b", rules)] == []


def test_a_job_script_reads_and_writes_only_the_paths_its_rule_gives_it():
    """A job script takes every path from its rule (``snakemake.input``, ``output``, ``params``, ``log``),
    never from the plans that compute them: a path it computed itself would be a file Snakemake neither
    waits for nor reruns the job on."""
    scripts = sorted((REPO / "workflow" / "scripts").glob("*.py"))
    planned = []
    for script in scripts:
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("plmfair"):
                parts = node.module.split(".")
                if "plan" in parts[1:]:
                    planned.append(f"{script.name}: from {node.module} import ...")
    assert len(scripts) > 20 and not planned, planned


def test_the_tests_mirror_the_packages():
    """A folder of tests is named for the package whose modules its files test (``tests/cloze/construction/``
    for ``plmfair.cloze.construction``); tests of a top-level module or of the workflow as a whole sit in
    ``tests/`` itself. No two test files share a name (pytest imports them by it)."""
    tests = REPO / "tests"
    folders = [
        p.relative_to(tests) for p in tests.rglob("*") if p.is_dir() and p.name not in ("cluster", "__pycache__")
    ]
    assert len(folders) >= 6
    for folder in folders:
        assert (LIBRARY / folder / "__init__.py").is_file(), f"tests/{folder}/ mirrors no package of src/plmfair"
        assert list((tests / folder).glob("test_*.py")), f"tests/{folder}/ holds no tests"
    names = [p.name for p in tests.rglob("test_*.py")]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


# a date as the measurement notes wrote them (2026-11-27): it belongs on a page a benchmark writes
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
HAND_WRITTEN = [REPO / "README.md", REPO / "config" / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def test_the_readme_is_short_and_no_hand_written_page_carries_a_date():
    assert (REPO / "README.md").stat().st_size <= 15_000
    for page in HAND_WRITTEN:
        if page.parent.name == "validation":
            continue  # written by the benchmarks (benchmarks/page.py), headed by the command and commit
        dated = DATE.findall(page.read_text(encoding="utf-8"))
        assert not dated, f"{page.relative_to(REPO)}: dated notes {dated[:3]} (a benchmark's page or CHANGELOG.md)"


# a Sphinx-style cross-reference in a docstring: :func:`plmfair.x.y`, :data:`NAME`, :meth:`~Class.method`
CROSS_REFERENCE = re.compile(r":(?:func|mod|data|attr|class|meth|exc):`~?([\w.]+)`")


def _resolves(name: str, module: str, cls: str | None) -> bool:
    """Whether a docstring's reference names something: from the package root, or from its module or class."""
    parts = name.split(".")
    scopes = [[]] if parts[0] == "plmfair" else [[*module.split("."), *([cls] if cls else [])], module.split("."), []]
    for scope in scopes:
        path = [*scope, *parts]
        for cut in range(len(path), 0, -1):
            try:
                obj = importlib.import_module(".".join(path[:cut]))
            except ImportError:
                continue
            for i, attr in enumerate(path[cut:], start=cut):
                if hasattr(obj, attr):
                    obj = getattr(obj, attr)
                    continue
                # the last name may be a field of a dataclass, or an attribute a class declares
                fields = {**getattr(obj, "__dataclass_fields__", {}), **getattr(obj, "__annotations__", {})}
                if i == len(path) - 1 and isinstance(obj, type) and attr in fields:
                    return True
                break
            else:
                return True
            break  # the longest module of this scope is found: the next scope
    return False


def test_every_cross_reference_in_a_docstring_names_something_that_exists():
    """A docstring's :func:/:data:/... reference names a module, function, class or constant that exists, from the
    package root or from its own module or class: a rename that leaves a dangling name fails here."""
    dangling = []
    for path in sorted(LIBRARY.rglob("*.py")):
        module = ".".join(("plmfair", *path.relative_to(LIBRARY).with_suffix("").parts)).removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = [(tree, None)] + [
            (n, None) for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            scopes += [(cls, cls.name)] + [(m, cls.name) for m in cls.body if isinstance(m, ast.FunctionDef)]
        for node, cls_name in scopes:
            for name in CROSS_REFERENCE.findall(ast.get_docstring(node) or ""):
                if not _resolves(name, module, cls_name):
                    dangling.append(f"{path.relative_to(LIBRARY)}: {name}")
    assert dangling == []
    # the check itself: a name that went away (it was plmfair.stats.smallest_permutation_p), a method named
    # from outside its class, and one named from inside it
    assert not _resolves("plmfair.stats.permutation.smallest_permutation_p", "plmfair.cloze.disparity", None)
    assert not _resolves("max_length", "plmfair.scoring.mlm", None)
    assert _resolves("max_length", "plmfair.scoring.base", "Scorer")


def _unannotated(path: Path) -> list[str]:
    """The functions of a module that mypy's ``disallow_untyped_defs`` refuses: a parameter (but ``self`` and
    ``cls``) or the return without an annotation (``__init__`` may leave its return out when it annotates a
    parameter, as mypy allows)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, *filter(None, (args.vararg, args.kwarg))]
        bare = [a.arg for a in params if a.annotation is None and a.arg not in ("self", "cls")]
        typed_init = node.name == "__init__" and any(a.annotation is not None for a in params)
        if bare or (node.returns is None and not typed_init):
            out.append(f"{node.name} (line {node.lineno})")
    return out


def test_every_function_is_annotated_and_mypy_lets_none_go():
    """mypy checks every module with ``disallow_untyped_defs`` (its bodies too), and no override lets a module of
    the project go unannotated or unchecked; the functions themselves are annotated (read here without mypy,
    which make lint runs)."""
    import tomllib

    mypy = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["disallow_untyped_defs"] is True and "ignore_missing_imports" not in mypy
    ours = ("plmfair", "plmfair_demo")
    for override in mypy.get("overrides", []):
        modules = [override["module"]] if isinstance(override["module"], str) else override["module"]
        assert not [m for m in modules if m.split(".")[0] in ours], override
        assert set(override) <= {"module", "ignore_missing_imports"}, override  # third-party libraries only
    bare = {
        str(path.relative_to(REPO)): found
        for path in sorted((REPO / "src").rglob("*.py"))
        if (found := _unannotated(path))
    }
    assert bare == {}
