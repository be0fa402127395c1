import copy

import pytest
import yaml
from conftest import REPO

from plmfair.config import validate_config
from plmfair.errors import ConfigError


@pytest.fixture()
def default_config(repo):
    with open(repo / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


@pytest.fixture()
def schema():
    """The configuration's schema: the shared sections and each study package's part (plmfair.config)."""
    from plmfair.config import config_schema

    return config_schema()


def test_default_and_demo_configs_validate(repo, default_config, schema):
    cfg = validate_config(default_config, schema)
    assert cfg["models"]["xlmr_base"]["uncased"] is False  # default filled in
    # the four WMT06 texts are members of one archive: one download, several config entries
    text = cfg["cloze"]["corpora"]["wmt06_test2006"]["text"]
    assert {e["file"] for e in text.values()} == {"wmt13-dev.tgz"} and text["fr"]["member"] == "dev/test2006.fr"
    assert cfg["cloze"]["filters"]["same_pos"] is False and cfg["cloze"]["empty_lines"] == "error"
    with open(repo / ".test" / "config" / "config.yaml") as fh:
        validate_config(yaml.safe_load(fh), schema)


def test_cloze_section_defaults_when_absent(default_config, schema):
    cfg = copy.deepcopy(default_config)
    del cfg["cloze"]
    cfg = validate_config(cfg, schema)
    assert cfg["cloze"]["corpora"] == {} and cfg["cloze"]["sample"] == {"n": 100, "seed": 2022, "examine": "as_needed"}


def _declare(name, **entry):
    return lambda c: c["models"].update({name: entry})


# Every configuration error, schema or cross-check: (change to the default config, the one line expected)
CONFIG_ERRORS = {
    "alpha not a number": (
        lambda c: c.setdefault("analysis", {}).__setitem__("alpha", float("nan")),
        "config error at analysis.alpha: nan is not a finite number",
    ),
    "alpha infinite": (
        lambda c: c.setdefault("analysis", {}).__setitem__("alpha", float("-inf")),
        "config error at analysis.alpha:",
    ),
    "unknown top-level key": (
        lambda c: c.update(unknown_key=1),
        "config error at (top level): Additional properties are not allowed ('unknown_key'",
    ),
    "unknown key": (
        lambda c: c["crows_pairs"].update(protocl="nangia"),
        "config error at crows_pairs: Additional properties are not allowed ('protocl' was unexpected)",
    ),
    "family typo": (
        lambda c: c["models"]["gpt2"].update(family="causl"),
        "config error at models.gpt2.family: 'causl' is not one of ['mlm', 'seq2seq', 'causal']",
    ),
    "hf_id and path": (
        lambda c: c["models"]["gpt2"].update(path="/models/gpt2"),
        "config error at models.gpt2: it has both hf_id and path; give one of them",
    ),
    "neither hf_id nor path": (
        lambda c: c["models"]["gpt2"].pop("hf_id"),
        "config error at models.gpt2: give hf_id (a Hugging Face id) or path (a local folder)",
    ),
    "bad checksum": (
        lambda c: c["datasets"]["crows_pairs"]["fr"].update(sha256="abc"),
        "config error at datasets.crows_pairs.fr.sha256",
    ),
    "file is ..": (
        lambda c: c["datasets"]["crows_pairs"]["fr"].update(file=".."),
        "config error at datasets.crows_pairs.fr.file: '..' is not a plain file name",
    ),
    "file with a folder": (
        lambda c: c["datasets"]["cloze_tests"]["mozart"].update(file="../../etc/passwd"),
        "config error at datasets.cloze_tests.mozart.file: '../../etc/passwd' is not a plain file name",
    ),
    "two downloads, one file name": (
        lambda c: c["datasets"]["crows_pairs"]["fr"].update(file="MozArt.zip"),
        "downloads need distinct file names",
    ),
    "one archive, two urls": (
        lambda c: c["cloze"]["corpora"]["wmt06_test2006"]["text"]["de"].update(url="https://elsewhere/dev.tgz"),
        "config error at cloze.corpora.wmt06_test2006.text.de.file: 'wmt13-dev.tgz' is also the file of",
    ),
    "language in capitals": (
        lambda c: c["models"]["gpt2"].update(languages=["EN"]),
        "config error at models.gpt2.languages.0: 'EN' is not a language of any data set (did you mean 'en'?)",
    ),
    "seq2seq on CrowS-Pairs": (
        lambda c: c["crows_pairs"].update(models=["mt5_base"]),
        "config error at crows_pairs.models.0: 'mt5_base' is a seq2seq model; the crows_pairs "
        "study scores the families ['causal', 'mlm']",
    ),
    "undeclared model, did you mean": (
        lambda c: c["mozart"].update(models=["xlmr_base", "gtp2"]),
        "config error at mozart.models.1: model 'gtp2' is not declared under `models` (did you mean 'gpt2'?)",
    ),
    "undeclared cloze model": (
        lambda c: c["cloze"].update(models=["bloom"]),
        "config error at cloze.models.0: model 'bloom' is not declared",
    ),
    "undeclared corpus model": (
        lambda c: c["cloze"]["corpora"]["wmt06_test2006"].update(models=["bloom"]),
        "config error at cloze.corpora.wmt06_test2006.models.0: model 'bloom' is not declared",
    ),
    "undeclared data set, did you mean": (
        lambda c: c["crows_pairs"].update(datasets=["fr", "mcp_de"]),
        "config error at crows_pairs.datasets.1: data set 'mcp_de' is not declared "
        "under datasets.crows_pairs (did you mean 'mcp_de_DE'?)",
    ),
    "reference group": (
        lambda c: c.update(analysis={"reference_group": "men"}),
        "config error at analysis.reference_group: 'men' is not one of ['MN', 'FN', 'MNN', 'FNN']",
    ),
    "a folder Snakemake would read as a path variable": (
        _declare("mine", path="models/<results>/mine", family="mlm"),
        "config error at models.mine.path: models/<results>/mine holds <results>, which Snakemake reads in a path "
        "as a path variable (pathvars); move the folder, or link it, to a path without <...>",
    ),
    "missing local model": (
        _declare("mine", path="no/such/folder", family="mlm"),
        "config error at models.mine.path: folder no/such/folder does not exist",
    ),
    "built model with a path": (
        _declare("tiny", path="elsewhere", family="mlm", build={"kind": "bert"}),
        "config error at models.tiny.path: a model with `build` is built by the workflow "
        "into the run's results/models/tiny: remove its path",
    ),
    "no spaCy pipeline": (
        lambda c: c["cloze"]["spacy"].pop("de"),
        "config error at cloze.spacy: no spaCy pipeline for 'de'",
    ),
    "pivot not a text language": (
        lambda c: c["cloze"]["corpora"]["wmt06_test2006"].update(pivot="it"),
        "cloze.corpora.wmt06_test2006.pivot: 'it'",
    ),
    "alignments of the pivot": (
        lambda c: c["cloze"]["corpora"]["wmt06_test2006"].update(alignments={"en": {"file": "a.align"}}),
        "config error at cloze.corpora.wmt06_test2006.alignments.en: not a language of the corpus",
    ),
    "unbalanced sample": (
        lambda c: c["cloze"]["sample"].update(n=30),
        "config error at cloze.sample.n: 30 quadruples cannot be balanced",
    ),
    "a corpus named mozart": (
        lambda c: c["cloze"]["corpora"].update(mozart=c["cloze"]["corpora"]["wmt06_test2006"]),
        "config error at cloze.corpora.mozart: a ready-made cloze test has that name; "
        "give the cloze corpus another name",
    ),
    "MozArt where it was": (
        lambda c: c["datasets"].update(mozart=c["datasets"]["cloze_tests"].pop("mozart")),
        "config error at datasets.mozart: MozArt is now one ready-made cloze test; move the entry "
        "(file, url, sha256, languages) to datasets.cloze_tests.mozart",
    ),
    "t-SNE of an undeclared test": (
        lambda c: c["mozart"].update(tsne={"sets": ["mozrat"]}),
        "config error at mozart.tsne.sets: 'mozrat' is no ready-made cloze test",
    ),
    "a corpus named crows_pairs": (
        lambda c: c["cloze"]["corpora"].update(crows_pairs=c["cloze"]["corpora"]["wmt06_test2006"]),
        "config error at cloze.corpora.crows_pairs: results/data/crows_pairs/ holds the CrowS-Pairs data sets",
    ),
    "a cloze test named like a corpus": (
        lambda c: c["datasets"].update(cloze_tests={"wmt06_test2006": {"file": "x.zip", "languages": ["en"]}}),
        "config error at cloze.corpora.wmt06_test2006: a ready-made cloze test "
        "has that name; give the cloze corpus another name",
    ),
    "a cloze test without languages": (
        lambda c: c["datasets"].update(cloze_tests={"mine": {"file": "x.zip"}}),
        "config error at datasets.cloze_tests.mine: 'languages' is a required property",
    ),
    "symmetrisation": (lambda c: c["cloze"].update(symmetrisation="gdfa"), "config error at cloze.symmetrisation"),
    "a model twice": (
        lambda c: c["mozart"].update(models=["xlmr_base", "gpt2", "xlmr_base"]),
        "config error at mozart.models: 'xlmr_base' is listed twice",
    ),
    "a data set twice": (
        lambda c: c["crows_pairs"].update(datasets=["fr", "fr"]),
        "config error at crows_pairs.datasets: 'fr' is listed twice",
    ),
    "a CrowS-Pairs model twice": (
        lambda c: c["crows_pairs"].update(models=["gpt2", "gpt2"]),
        "config error at crows_pairs.models: 'gpt2' is listed twice",
    ),
    "a corpus model twice": (
        lambda c: c["cloze"]["corpora"]["wmt06_test2006"].update(models=["gpt2", "gpt2"]),
        "config error at cloze.corpora.wmt06_test2006.models: 'gpt2' is listed twice",
    ),
    "a corpus without files": (
        lambda c: c["cloze"]["corpora"].update(mine={"pivot": "en"}),
        "config error at cloze.corpora.mine: a corpus names its files: `text` (one file per language) or "
        "`bitexts` (a pivot bitext per other language), not both; or `enabled: false` to leave it out",
    ),
    "a corpus switched on without files": (
        lambda c: c["cloze"]["corpora"].update(mine={"enabled": True, "pivot": "en"}),
        "config error at cloze.corpora.mine: a corpus names its files",
    ),
    "direction_from an undeclared set": (
        lambda c: c["datasets"]["crows_pairs"]["mcp_it_IT"].update(direction_from="frr"),
        "config error at datasets.crows_pairs.mcp_it_IT.direction_from: data set "
        "'frr' is not declared under datasets.crows_pairs (did you mean 'fr'?)",
    ),
    "direction_from in a cycle": (
        lambda c: (
            c["datasets"]["crows_pairs"]["mcp_it_IT"].update(direction_from="fr"),
            c["datasets"]["crows_pairs"]["fr"].update(direction_from="mcp_it_IT"),
        ),
        "direction_from: a cycle (fr -> mcp_it_IT -> fr)",
    ),
    "a huge value": (
        lambda c: c["crows_pairs"].update(protocol=["x" * 50] * 10_000),
        "config error at crows_pairs.protocol: ",
    ),
    "unknown protocol": (
        lambda c: c["crows_pairs"].update(protocol="nangai"),
        "config error at crows_pairs.protocol: unknown protocol 'nangai' (did you mean 'nangia'?); the "
        "masked-LM protocols are ['nangia', 'all_tokens', 'within_word_l2r', 'aul']",
    ),
    "the causal protocol for masked LMs": (
        lambda c: c["crows_pairs"].update(protocol="sentence_log_likelihood"),
        "config error at crows_pairs.protocol: 'sentence_log_likelihood' is the protocol of causal models",
    ),
}


@pytest.mark.parametrize("case", list(CONFIG_ERRORS))
def test_config_errors_are_one_line_naming_the_key(default_config, schema, case):
    mutate, message = CONFIG_ERRORS[case]
    cfg = copy.deepcopy(default_config)
    mutate(cfg)
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, schema)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)
    assert len(str(err.value)) < 500  # an excerpt of a value, never the whole of it


@pytest.mark.parametrize(
    ("threads", "resources", "said"),
    [
        ({"crows_pairs_score": "two"}, {}, "--set-threads crows_pairs_score=two: threads takes a whole number"),
        ({"crows_pairs_score": -1}, {}, "--set-threads crows_pairs_score=-1"),
        ({}, {"crows_pairs_score": {"mem_mb": "lots"}}, "--set-resources crows_pairs_score:mem_mb=lots: mem_mb takes"),
        ({}, {"crows_pairs_score": {"token_budget": "'big'"}}, "token_budget takes a whole number"),
        (
            {"crows_pairs_scor": 2},
            {},
            "--set-threads crows_pairs_scor: no rule of that name (did you mean 'crows_pairs_score'?)",
        ),
    ],
)
def test_bad_resource_overrides_are_one_line(threads, resources, said):
    from plmfair.config import check_overrides

    with pytest.raises(ConfigError) as caught:
        check_overrides(threads, resources, {"crows_pairs_score", "cloze_score"})
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_valid_resource_overrides_pass():
    from plmfair.config import check_overrides

    check_overrides(
        {"crows_pairs_score": 4, "cloze_score": "2"},
        {
            "crows_pairs_score": {
                "mem_mb": 8000,
                "runtime": "2h",
                "mem": "'16GB'",
                "token_budget": "min(2 * input.size_mb, 8000)",
            }
        },
        {"crows_pairs_score", "cloze_score"},
    )


def test_keys_the_hypotheses_replaced_are_refused_with_where_to_go(tmp_path):
    """crows_pairs.alpha (one level for all the run's hypotheses now: analysis.alpha) and analysis.bootstrap (no
    interval is a bootstrap's any more) are refused in one line that says what to do."""
    from plmfair.config import validate_config
    from plmfair.errors import ConfigError

    for config, said in (
        ({"crows_pairs": {"alpha": 0.01}}, "set analysis.alpha instead"),
        ({"analysis": {"bootstrap": 999}}, "remove the key"),
    ):
        with pytest.raises(ConfigError, match=said):
            validate_config(config)


# parameters that stand for a configured setting (workflow/schemas/config.schema.yaml states its default)
CONFIGURED = {"alpha", "permutations", "seed", "perplexity", "max_unknown"}


def test_no_python_default_restates_a_configured_setting():
    """A function that takes a configured setting (``alpha``, ``permutations``, ``seed``, ``perplexity``,
    ``max_unknown``) takes it as a required argument and a command-line option leaves its default to the
    schema (``plmfair compare --alpha``): the schema states every default once, so a changed default is
    changed in one place."""
    import ast

    taking, defaulted = 0, []
    for path in sorted((REPO / "src" / "plmfair").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            pairs = []
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                positional = node.args.posonlyargs + node.args.args
                defaults = [None] * (len(positional) - len(node.args.defaults)) + node.args.defaults
                pairs = [
                    (a.arg, d)
                    for a, d in [
                        *zip(positional, defaults, strict=True),
                        *zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True),
                    ]
                ]
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument" and node.args:
                flag = str(getattr(node.args[0], "value", "")).lstrip("-")
                pairs = [(flag, k.value) for k in node.keywords if k.arg == "default"]
            for name, default in pairs:
                if name in CONFIGURED:
                    taking += 1
                    if isinstance(default, ast.Constant) and default.value is not None:
                        defaulted.append(f"{path.relative_to(REPO)}:{default.lineno}: {name}={default.value!r}")
    assert taking >= 25, taking
    assert not defaulted, defaulted


def test_compare_takes_the_schemas_alpha_by_default():
    """``plmfair compare`` without ``--alpha`` decides at the schema's ``analysis.alpha``."""
    from plmfair.config import SCHEMA, schema_default

    analysis = yaml.safe_load(SCHEMA.read_text())["properties"]["analysis"]["properties"]
    assert schema_default("analysis.alpha") == analysis["alpha"]["default"]
    assert schema_default("analysis.permutations") == analysis["permutations"]["default"]


def test_the_construction_filters_python_falls_back_on_are_the_schemas():
    """A cloze corpus's filters, where a caller gives none (plmfair.cloze.construction.selection), are the
    defaults of the schema's cloze.filters: one changed alone fails here."""
    from plmfair.cloze.construction.filters import DEFAULT_FILTERS
    from plmfair.config import config_schema

    filters = config_schema()["properties"]["cloze"]["properties"]["filters"]["properties"]
    assert {key: entry["default"] for key, entry in filters.items()} == DEFAULT_FILTERS


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("models: [1, 2]\n", "config error at models (in {file}): [1, 2] is not a mapping; write models: {{...}}"),
        ("models: {mine: [1]}\n", "config error at models.mine (in {file}): [1] is not a mapping"),
        ("crows_pairs: 5\n", "config error at crows_pairs (in {file}): 5 is not a mapping"),
    ],
)
def test_a_section_of_the_wrong_type_is_one_line_before_anything_reads_it(tmp_path, text, said):
    from plmfair.runs.folders import setup_run

    mine = tmp_path / "mine.yaml"
    mine.write_text(text)
    with pytest.raises(ConfigError) as err:
        setup_run(
            models=[], studies=None, datasets=None, run="r", configfiles=[mine], runs=tmp_path, family=None, argv=[]
        )
    assert str(err.value) == said.format(file=mine) or str(err.value).startswith(said.format(file=mine))


OFF = {"cloze": {"corpora": {"wmt06_europarl": {"enabled": False}, "wmt06_test2006": {"enabled": False}}}}


def test_a_corpus_switched_off_is_not_read_for_its_files_or_languages(schema):
    """A config of its own, read without config/config.yaml (``snakemake --directory elsewhere``): the
    default corpora switched off name no files, and nothing asks them for their languages."""
    from plmfair.cloze.plan import cloze_corpora

    cfg = validate_config(copy.deepcopy(OFF), schema)
    assert cloze_corpora(cfg) == {} and "text" not in cfg["cloze"]["corpora"]["wmt06_europarl"]


@pytest.mark.e2e
def test_snakemake_elsewhere_plans_a_config_that_switches_the_default_corpora_off(tmp_path):
    """``snakemake --directory`` a folder outside the checkout with config files of its own, one switching the
    default corpora off (the checkout's config/config.yaml is not read there): the demo's own corpus is
    planned, and nothing of the corpora switched off."""
    from conftest import DEMO_DATA, planned

    mine = tmp_path / "mine.yaml"
    mine.write_text(yaml.safe_dump(OFF))
    work = tmp_path / "elsewhere"
    work.mkdir()
    jobs = planned(work, configfiles=[REPO / ".test" / "config" / "config.yaml", mine], mirror=DEMO_DATA)
    built = {wildcards for rule, wildcards in jobs if rule == "cloze_select"}
    assert built == {"corpus=demo"}, jobs
    assert not [job for job in jobs if "wmt06" in job[1]]
