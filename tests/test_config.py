import copy

import pytest
import yaml

from plmfair.config import validate_config
from plmfair.errors import ConfigError


@pytest.fixture()
def default_config(repo):
    with open(repo / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


@pytest.fixture()
def schema(repo):
    return repo / "workflow" / "schemas" / "config.schema.yaml"


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


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda c: c.update(unknown_key=1), "config error at (top level): Additional properties are not allowed ('unknown_key'"),
        (lambda c: c["models"]["xlmr_base"].update(family="mllm"), "config error at models.xlmr_base.family: 'mllm' is not one of"),
        (lambda c: c["datasets"]["crows_pairs"]["fr"].update(sha256="abc"), "config error at datasets.crows_pairs.fr.sha256"),
        (lambda c: c["mozart"].update(models=["xlmr_base", "gpt9"]),
         "config error at mozart.models.1: model 'gpt9' is not declared"),
        (lambda c: c["crows_pairs"].update(models=["mt5_base"]),
         "config error at crows_pairs.models.0: 'mt5_base' is a seq2seq model; the crows_pairs study scores the "
         "families ['causal', 'mlm']"),
        (lambda c: c["crows_pairs"]["datasets"].append("de"), "data set 'de' is not declared"),
        (lambda c: c["datasets"]["crows_pairs"]["fr"].update(file="MozArt.zip"), "downloads need distinct file names"),
        (lambda c: c["cloze"]["corpora"]["wmt06_test2006"]["text"]["de"].update(url="https://elsewhere/dev.tgz"),
         "config error at cloze.corpora.wmt06_test2006.text.de.file: 'wmt13-dev.tgz' is also the file of"),
        (lambda c: c["cloze"]["spacy"].pop("de"), "config error at cloze.spacy: no spaCy pipeline for 'de'"),
        (lambda c: c["cloze"]["corpora"]["wmt06_test2006"].update(pivot="it"), "cloze.corpora.wmt06_test2006.pivot: 'it'"),
        (lambda c: c["cloze"]["corpora"]["wmt06_test2006"].update(alignments={"en": {"file": "a.align"}}),
         "config error at cloze.corpora.wmt06_test2006.alignments.en: not a language of the corpus"),
        (lambda c: c["cloze"]["sample"].update(n=30), "config error at cloze.sample.n: 30 quadruples cannot be balanced"),
        (lambda c: c["cloze"].update(models=["bloom"]), "config error at cloze.models.0: model 'bloom' is not declared"),
        (lambda c: c["cloze"].update(symmetrisation="gdfa"), "config error at cloze.symmetrisation"),
    ],
)
def test_config_errors_are_one_line_naming_the_key(default_config, schema, mutate, message):
    cfg = copy.deepcopy(default_config)
    mutate(cfg)
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, schema)
    text = str(err.value)
    assert message in text
    assert "\n" not in text
