import hashlib

import pytest

from plmfair.errors import DataError
from plmfair.io.download import fetch, find_in_mirror, sha256_of


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_fetch_from_mirror_verified(tmp_path):
    mirror = tmp_path / "mirror" / "sub"
    mirror.mkdir(parents=True)
    (mirror / "a.csv").write_bytes(b"hello")
    dest = tmp_path / "out" / "a.csv"
    fetch(
        filename="a.csv",
        url=None,
        sha256=_sha(b"hello"),
        dest=dest,
        store=tmp_path / "store",
        mirror=tmp_path / "mirror",
    )
    assert dest.read_bytes() == b"hello"
    assert sha256_of(dest) == _sha(b"hello")


def test_checksum_mismatch_leaves_nothing(tmp_path):
    (tmp_path / "a.csv").write_bytes(b"tampered")
    dest = tmp_path / "out" / "a.csv"
    with pytest.raises(DataError, match="checksum mismatch for a.csv") as err:
        fetch(filename="a.csv", url=None, sha256=_sha(b"hello"), dest=dest, store=tmp_path / "store", mirror=tmp_path)
    assert "update its sha256" in str(err.value)
    assert not dest.exists()
    assert list((tmp_path / "store").iterdir()) == []  # no temporary file left either


def test_no_network_no_mirror_names_file_and_remedy(tmp_path):
    dest = tmp_path / "a.csv"
    # port 9 on loopback: refused at once, like an offline machine
    with pytest.raises(DataError) as err:
        fetch(
            filename="a.csv",
            url="http://127.0.0.1:9/a.csv",
            sha256=_sha(b"x"),
            dest=dest,
            store=tmp_path / "store",
            mirror=None,
            timeout=5,
        )
    msg = str(err.value)
    assert "could not fetch a.csv" in msg and "mirror" in msg
    assert not dest.exists()


def test_missing_mirror_folder_and_unverified_warning(tmp_path, caplog):
    with pytest.raises(DataError, match="mirror folder .* does not exist"):
        find_in_mirror(tmp_path / "nope", "a.csv")
    (tmp_path / "a.csv").write_bytes(b"data")
    with caplog.at_level("WARNING"):
        fetch(
            filename="a.csv",
            url=None,
            sha256=None,
            dest=tmp_path / "o" / "a.csv",
            store=tmp_path / "s",
            mirror=tmp_path,
        )
    assert "UNVERIFIED: a.csv" in caplog.text


def test_the_store_keeps_one_copy_and_a_run_only_its_own_link(tmp_path):
    """Two runs fetch the same file: the store holds it once, each run its own link; deleting a run's link
    (what Snakemake does to a failed job's output) leaves the store; a later fetch without any mirror
    takes the stored file, and a pinned file that is not what the store holds is fetched again."""
    mirror, store = tmp_path / "mirror", tmp_path / "store"
    mirror.mkdir()
    (mirror / "a.csv").write_bytes(b"hello")
    first, second = tmp_path / "r1" / "a.csv", tmp_path / "r2" / "a.csv"
    for dest in (first, second):
        fetch(filename="a.csv", url=None, sha256=_sha(b"hello"), dest=dest, store=store, mirror=mirror)
    assert first.stat().st_ino == second.stat().st_ino == (store / "a.csv").stat().st_ino
    first.unlink()
    assert (store / "a.csv").read_bytes() == b"hello"
    fetch(filename="a.csv", url=None, sha256=_sha(b"hello"), dest=first, store=store, mirror=None)
    assert first.read_bytes() == b"hello"
    (mirror / "a.csv").write_bytes(b"other")
    fetch(filename="a.csv", url=None, sha256=_sha(b"other"), dest=first, store=store, mirror=mirror)
    assert first.read_bytes() == b"other" and second.read_bytes() == b"hello"  # the other run keeps its file


@pytest.mark.e2e
def test_an_unverified_file_is_read_again_when_its_mirror_copy_changes(tmp_path):
    """A file kept without a checksum: its download rule has the mirror copy's size and time as a
    parameter, so a new copy reruns the download (and what reads it); a verified file has none."""
    import os
    import subprocess

    from conftest import BIN, REPO, planned

    from plmfair.io.download import mirror_copy_stamp

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "MozArt.zip").write_bytes((REPO / ".test" / "data" / "MozArt.zip").read_bytes())
    stamp = mirror_copy_stamp(mirror, "MozArt.zip")
    assert stamp.startswith(f"{(mirror / 'MozArt.zip').stat().st_size} bytes")
    assert mirror_copy_stamp(mirror, "absent.csv") == "" and mirror_copy_stamp(None, "MozArt.zip") == ""

    config = tmp_path / "unverified.yaml"
    config.write_text("datasets: {cloze_tests: {mozart: {sha256: null}}}\n")
    work = tmp_path / "work"
    target = "results/downloads/MozArt.zip"

    def snakemake():
        return subprocess.run(
            [
                str(BIN / "snakemake"),
                "--snakefile",
                str(REPO / "Snakefile"),
                "--directory",
                str(work),
                "--cores",
                "1",
                target,
                "--configfile",
                str(REPO / ".test" / "config" / "config.yaml"),
                str(config),
                "--config",
                f"mirror={mirror}",
            ],
            capture_output=True,
            text=True,
            check=True,
        )

    snakemake()
    configs = (REPO / ".test" / "config" / "config.yaml", config)
    assert planned(work, target, configfiles=configs, mirror=mirror) == []
    os.utime(mirror / "MozArt.zip", ns=(1_000_000_000, 1_000_000_000))  # a new copy of the file
    assert planned(work, target, configfiles=configs, mirror=mirror) == [("download", "file=MozArt.zip")]
