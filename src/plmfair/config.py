"""Configuration checks: the JSON schema (through ``snakemake.utils.validate``), then the
cross-references of :func:`check_config` (names declared, families that fit the study,
languages of the data, corpora consistent, downloads distinct). Imports run one way: this
module reads the plan (:mod:`plmfair.plan`), the plan never validates.

Every problem is reported as one line that names the key: ``config error at
models.xlmr_base.family: 'mllm' is not one of ['causal', 'mlm', 'seq2seq']``.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from plmfair.errors import ConfigError, did_you_mean
from plmfair.plan import (
    STUDIES,
    corpus_langs,
    crows_pairs_sets,
    download_entries,
    is_built,
    model_specs,
    study_languages,
)
from plmfair.scoring import FAMILIES
from plmfair.scoring.protocols import PROTOCOLS, family_protocols


def _key_path(error) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def validate_config(config: dict, schema: str | os.PathLike) -> dict:
    """Validate ``config`` in place (filling defaults); raise :class:`ConfigError` with one line on failure."""
    # only when a config or a record is validated
    import jsonschema
    import yaml
    from snakemake.utils import validate

    _check_moved(config)
    try:
        validate(config, str(schema), set_default=True)
    except Exception as exc:  # snakemake wraps the jsonschema error in a WorkflowError
        with open(schema, encoding="utf-8") as fh:
            schema_obj = yaml.safe_load(fh)
        errors = list(jsonschema.Draft202012Validator(schema_obj).iter_errors(config))
        if not errors:
            raise ConfigError(f"config error: {exc}") from exc
        best = jsonschema.exceptions.best_match(errors)
        if best.validator == "uniqueItems":
            seen: set = set()
            repeated = [x for x in best.instance if x in seen or seen.add(x)]
            message = f"{repeated[0]!r} is listed twice (each name once: a repeat would count its results twice)"
        else:
            message = best.message
        if len(message) > 300:  # a value can be huge (a YAML alias bomb): an excerpt
            message = message[:200] + f" ... ({len(message):,} characters)"
        raise ConfigError(f"config error at {_key_path(best)}: {message}") from None
    check_config(config)
    return config


def _check_moved(config: dict) -> None:
    """A key of an earlier version's config, named with where it lives now (the schema alone would only
    say that it is not allowed)."""
    datasets = config.get("datasets")
    if isinstance(datasets, dict) and "mozart" in datasets:
        raise ConfigError(
            "config error at datasets.mozart: MozArt is now one ready-made cloze test; move the entry "
            "(file, url, sha256, languages) to datasets.cloze_tests.mozart"
        )
    analysis = config.get("analysis")
    if isinstance(analysis, dict) and "bootstrap" in analysis:
        raise ConfigError(
            "config error at analysis.bootstrap: no interval a run prints is a bootstrap's any more (each is one "
            "whose coverage make bench-stats measures: docs/statistics.md); remove the key"
        )
    crows_pairs = config.get("crows_pairs")
    if isinstance(crows_pairs, dict) and "alpha" in crows_pairs:
        raise ConfigError(
            "config error at crows_pairs.alpha: a run has one significance level for all its tests (its analysis "
            "plan adjusts them together); set analysis.alpha instead"
        )


# The schema beside the workflow (plmfair is installed from its checkout).
SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def load_config(paths: list[str | os.PathLike], *, schema: str | os.PathLike = SCHEMA) -> dict:
    """The configuration a run gets from ``--configfile`` files: merged key by key in order, as
    Snakemake merges them, then validated with the schema's defaults filled in
    (:func:`validate_config`), so that tools run before Snakemake read what the workflow reads."""
    # only when a config or a record is read
    import yaml
    from snakemake.utils import update_config

    config: dict = {}
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            update_config(config, yaml.safe_load(fh) or {})
    return validate_config(config, schema)


def known_languages(config: dict) -> list[str]:
    """Every language some data set of the config is in."""
    langs = [
        lang for entry in config.get("datasets", {}).get("cloze_tests", {}).values() for lang in entry["languages"]
    ]
    langs += [entry["lang"] for entry in crows_pairs_sets(config).values()]
    langs += study_languages(config, "cloze")
    return sorted(set(langs))


def check_config(config: dict) -> None:
    """Names used by the studies must be declared and fit the study; one line naming the key otherwise."""
    specs = model_specs(config)
    sets = crows_pairs_sets(config)
    for i, name in enumerate(config["crows_pairs"]["datasets"]):
        if name not in sets:
            raise ConfigError(
                f"config error at crows_pairs.datasets.{i}: data set {name!r} is not declared under "
                f"datasets.crows_pairs{did_you_mean(name, sets)} (declared: {sorted(sets)})"
            )
    for name, entry in sets.items():
        chain, source = [name], entry.get("direction_from")
        while source:
            if source not in sets:
                raise ConfigError(
                    f"config error at datasets.crows_pairs.{chain[-1]}.direction_from: data set {source!r} "
                    f"is not declared under datasets.crows_pairs{did_you_mean(source, sets)}"
                )
            if source in chain:
                raise ConfigError(
                    f"config error at datasets.crows_pairs.{name}.direction_from: a cycle "
                    f"({' -> '.join([*chain, source])}); a chain of direction_from must end in a data "
                    f"set with its own directions"
                )
            chain.append(source)
            source = sets[source].get("direction_from")
    _check_protocol(config["crows_pairs"]["protocol"])
    lists = [(study, f"{study}.models", config[study].get("models") or []) for study in STUDIES]
    lists += [
        ("cloze", f"cloze.corpora.{name}.models", entry.get("models") or [])
        for name, entry in config.get("cloze", {}).get("corpora", {}).items()
    ]
    for study, key, names in lists:
        for i, name in enumerate(names):
            where = f"config error at {key}.{i}"
            if name not in specs:
                raise ConfigError(
                    f"{where}: model {name!r} is not declared under `models`{did_you_mean(name, specs)} "
                    f"(declared: {sorted(specs)})"
                )
            family = FAMILIES[specs[name].family]
            if not family.scores(study):
                able = sorted(f.name for f in FAMILIES.values() if f.scores(study))
                raise ConfigError(
                    f"{where}: {name!r} is a {family.name} model; the {study} study scores the families {able}"
                )
    known = known_languages(config)
    for name, spec in specs.items():
        for i, lang in enumerate(spec.languages):
            if lang not in known:
                raise ConfigError(
                    f"config error at models.{name}.languages.{i}: {lang!r} is not a language of any data set"
                    f"{did_you_mean(lang, known)} (languages of the data: {known})"
                )
    for name, spec in specs.items():
        if spec.path and not is_built(config, name) and not Path(spec.path).is_dir():
            raise ConfigError(
                f"config error at models.{name}.path: folder {spec.path} does not exist (relative paths "
                f"start from the working directory {Path.cwd()}); give the folder holding the model"
            )
    _check_cloze(config)
    _check_downloads(config)


def _check_protocol(name: str) -> None:
    """``crows_pairs.protocol`` names a masked-LM protocol of the registry (a new protocol is its module
    and its registry line, with no list to extend here or in the schema)."""
    masked = family_protocols("mlm")
    if name in masked:
        return
    if name in PROTOCOLS:
        raise ConfigError(
            f"config error at crows_pairs.protocol: {name!r} is the protocol of {PROTOCOLS[name].family} "
            f"models, used for them whatever this key says; this key chooses the masked LMs' protocol, "
            f"one of {masked}"
        )
    raise ConfigError(
        f"config error at crows_pairs.protocol: unknown protocol {name!r}{did_you_mean(name, masked)}; "
        f"the masked-LM protocols are {masked}"
    )


# A corpus's or a ready-made cloze test's answers are ingested at results/data/<name>/.
RESERVED_CORPUS_NAMES = {"crows_pairs": "results/data/crows_pairs/ holds the CrowS-Pairs data sets"}


def _check_cloze(config: dict) -> None:
    cloze = config["cloze"]
    classes = len(cloze["filters"]["pos"])
    n = cloze["sample"]["n"]
    if cloze["corpora"] and n % classes:
        raise ConfigError(
            f"config error at cloze.sample.n: {n} quadruples cannot be balanced across {classes} POS classes; "
            f"use a multiple of {classes}"
        )
    tests = config.get("datasets", {}).get("cloze_tests", {})
    for name in tests:  # a ready-made test's answers are ingested at results/data/<name>/, as a corpus's
        clash = RESERVED_CORPUS_NAMES.get(name) or (
            "a cloze corpus has that name" if name in cloze["corpora"] else None
        )
        if clash:
            raise ConfigError(f"config error at datasets.cloze_tests.{name}: {clash}; give the cloze test another name")
    tsne = config["mozart"]["tsne"]
    unknown = [name for name in tsne["sets"] if name not in tests]
    if tsne["sentences"] and tests and unknown:  # with no ready-made test declared there is nothing to map
        raise ConfigError(
            f"config error at mozart.tsne.sets: {unknown[0]!r} is no ready-made cloze test (declared in "
            f"datasets.cloze_tests: {sorted(tests)}); list the tests whose quadruples are mapped, or set "
            f"mozart.tsne.sentences: [] for no maps"
        )
    for name, corpus in cloze["corpora"].items():
        if name in RESERVED_CORPUS_NAMES:
            raise ConfigError(
                f"config error at cloze.corpora.{name}: {RESERVED_CORPUS_NAMES[name]}; give the corpus another name"
            )
        if not corpus.get("enabled", True):
            continue
        where = f"cloze.corpora.{name}"
        pivot = corpus["pivot"]
        if "bitexts" in corpus and pivot in corpus["bitexts"]:
            raise ConfigError(
                f"config error at {where}.bitexts.{pivot}: the pivot language has no bitext of its own; "
                f"give one bitext per other language"
            )
        langs = corpus_langs(corpus)
        if "text" in corpus and pivot not in corpus["text"]:
            raise ConfigError(
                f"config error at {where}.pivot: {pivot!r} is not one of the text languages {list(corpus['text'])}"
            )
        for gold_name, gold in corpus["gold_alignments"].items():
            if gold["lang"] not in langs or gold["lang"] == pivot:
                raise ConfigError(
                    f"config error at {where}.gold_alignments.{gold_name}.lang: {gold['lang']!r} is not "
                    f"a non-pivot language of the corpus ({langs[1:]})"
                )
        for key in ("alignments", "align_extra", "answers"):
            for lang in corpus[key]:
                if lang not in langs or (key != "answers" and lang == pivot):
                    allowed = [x for x in langs if key == "answers" or x != pivot]
                    raise ConfigError(f"config error at {where}.{key}.{lang}: not a language of the corpus ({allowed})")
        for lang in langs:
            if lang not in cloze["spacy"]:
                raise ConfigError(
                    f"config error at cloze.spacy: no spaCy pipeline for {lang!r} (used by {where}); add "
                    f"`{lang}: <pipeline name>` (for example {lang}_core_news_sm)"
                )


def _check_downloads(config: dict) -> None:
    """A download is a plain file name; entries naming the same file must be the same download
    (several members of one archive)."""
    files: dict[str, tuple[str, dict]] = {}
    for where, entry in download_entries(config).items():
        name = entry["file"]
        if name in (".", "..") or "/" in name or "\\" in name:
            raise ConfigError(
                f"config error at {where}.file: {name!r} is not a plain file name; give the name the file "
                f"is stored under in resources/downloads/, results/downloads/ and in the mirror (no folder, no '..')"
            )
        if entry["file"] in files:
            other_where, other = files[entry["file"]]
            if (entry.get("url"), entry.get("sha256")) != (other.get("url"), other.get("sha256")):
                raise ConfigError(
                    f"config error at {where}.file: {entry['file']!r} is also the file of {other_where} with another "
                    f"url or sha256; downloads need distinct file names"
                )
            continue
        files[entry["file"]] = (where, entry)


# Resources every plmfair rule reads as a whole number (Snakemake's own mem/disk/runtime also take
# "16GB" and "2h"); an expression over these names is Snakemake's and is left to it.
INTEGER_RESOURCES = ("mem_mb", "mem_mib", "disk_mb", "disk_mib", "gpu", "cpus_per_gpu", "token_budget")
_EXPRESSION_NAMES = {
    "input",
    "threads",
    "attempt",
    "wildcards",
    "params",
    "resources",
    "rulename",
    "min",
    "max",
    "int",
    "round",
    "abs",
    "float",
    "len",
    "sum",
}


def _bad_override(raw, *, integer: bool) -> bool:
    """Whether a ``--set-threads``/``--set-resources`` value cannot be what Snakemake takes: an
    integer where one is needed, or an expression naming something Snakemake does not give it."""
    if raw is None or isinstance(raw, bool):
        return True
    if isinstance(raw, int):
        return raw < 0
    try:
        tree = ast.parse(str(raw).strip(), mode="eval")
    except SyntaxError:  # "2h", "16GB": Snakemake reads them where a size or a time span is meant
        return integer
    if isinstance(tree.body, ast.Constant):
        value = tree.body.value
        return (not isinstance(value, int) or value < 0) if integer else False
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    return bool(names - _EXPRESSION_NAMES)


def check_overrides(threads, resources, rules) -> None:
    """Refuse, in one line each, ``--set-threads`` and ``--set-resources`` values Snakemake would
    otherwise fail on deep in its scheduler (``crows_pairs_score=two``: a 55-line traceback) or a
    rule name that matches no rule (silently ignored). ``threads``: rule -> raw value;
    ``resources``: rule -> resource -> raw value; ``rules``: the workflow's rule names."""
    problems = []
    for option, given in (
        ("--set-threads", {r: {"threads": v} for r, v in threads.items()}),
        ("--set-resources", resources),
    ):
        for rule, values in given.items():
            if rule not in rules:
                problems.append(f"{option} {rule}: no rule of that name{did_you_mean(rule, rules)}")
                continue
            for name, raw in values.items():
                if _bad_override(raw, integer=name == "threads" or name in INTEGER_RESOURCES):
                    shown = f"{rule}={raw}" if name == "threads" else f"{rule}:{name}={raw}"
                    example = f"{rule}=4" if name == "threads" else f"{rule}:{name}=8000"
                    problems.append(
                        f"{option} {shown}: {name} takes a whole number (or an expression of input, "
                        f"threads, attempt), e.g. {option} {example}"
                    )
    if problems:
        raise ConfigError("; ".join(problems))
